// Package policy owns the Rego engine: compiling policies' rules in a sandbox
// whose built-ins it gives its own queries alone, preparing queries, building
// the input document and evaluating with deadlines, and judging with the
// twins in Go that built-in rules are given (NativeRule) instead of their
// modules. It knows nothing of the Kubernetes API beyond the values it is
// handed.
package policy
