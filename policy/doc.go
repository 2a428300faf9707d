// Package policy owns the Rego engine: compiling policies' rules in a sandbox
// whose built-ins it gives its own queries alone, preparing queries, building
// the input document and evaluating with deadlines. It knows nothing of the
// Kubernetes API beyond the values it is handed.
package policy
