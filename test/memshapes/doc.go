// Package memshapes is the catalogue of memory shapes: a container's working
// set over its life (leaks at several rates, with and without a garbage
// collector's sawtooth, warm-ups, steps, bursts, plateaus), each with what
// the built-in memory-leak rule must do with it: recreate the container
// before its working set reaches 90% of its memory limit, or never recreate
// it. Its tests replay every shape through the manager's own sampler and the
// built-in rule at the production defaults, and write the outcomes into
// docs/rules.md.
package memshapes
