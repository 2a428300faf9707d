// Package engine benchmarks the Rego engine of package policy on a fleet of
// realistic pods, next to the simple way of evaluating the same rules, and
// prints the figures. It needs no cluster. Its fleet of targets, its
// measures and OPA's prepared query fed JSON, the reference it compares
// with, are also what test/bench/scale measures the engine with over the
// scale benchmark's pods.
package engine
