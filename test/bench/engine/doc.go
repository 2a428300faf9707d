// Package engine benchmarks the Rego engine of package policy on a fleet of
// realistic pods, next to the simple way of evaluating the same rules, and
// prints the figures. It needs no cluster.
package engine
