// Package policyspec turns a RecreatePolicy's spec into checked parts ready
// to use (selector, container patterns, schedule, windows, rules, rollout
// budget), with errors that name the field. The admission webhook and the
// policy controller share it, so what one accepts the other can run.
//
// Shared with the kubectl plugin on purpose: kubectl rejuv reads policies'
// containers, budgets and graces the way the manager does.
package policyspec
