// Package policytest builds realistic pods for tests and benchmarks of the
// Rego engine (full objects with spec and status, as a cluster returns
// them), and holds the misbehaving rules those tests share.
package policytest
