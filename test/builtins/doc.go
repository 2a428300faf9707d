// Package builtins writes the table of the Rego sandbox's built-ins in
// docs/security.md from the sandbox's audit (policy.Audit): which
// built-ins rules may call, within which bound, and why the others are
// denied.
package builtins
