// Package planner decides, without touching the API server, what a
// RecreatePolicy does with a candidate recreation: the safety gates in the
// order of the design, the budget of a rolling run, and the request that
// carries out an admitted candidate. The policy controller feeds it.
//
// Shared with the kubectl plugin on purpose: kubectl rejuv restart --wait
// reads a run's trigger the way the controller writes it.
package planner
