// Package planner plans a pass of a RecreatePolicy without touching the
// API server: from what the pass read of the namespace (Input, with what
// its requests say, Facts) and what the rules said (Verdicts), Pass builds
// the Plan: the policy's status and conditions, the rule halts, the safety
// gates' decision on each candidate in the order of the design, the runs
// fired and carried on (their baseline and progress), the events to send
// and when to look again. The policy controller reads, judges, then acts
// on the Plan and writes the status; this package has no client, so that
// planning cannot make a client call. It also makes the request that
// carries out an admitted candidate.
//
// Shared with the kubectl plugin on purpose: kubectl rejuv restart --wait
// reads a run's trigger the way the controller writes it.
package planner
