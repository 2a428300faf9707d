// Command soak runs Rejuv as installed on the harness cluster under load
// and random faults for SOAK_DURATION, checks every safety promise from
// outside as it goes (package invariant), prints a summary table and
// exits non-zero on any violation. `make soak` runs it; SOAK_SEED replays
// a run's random choices.
package main
