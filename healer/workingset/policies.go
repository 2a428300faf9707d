package workingset

import (
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/rules"
)

// policyReadsMemory reports whether one of a policy's rules reads the
// memory signal: a built-in rule that does, or an inline rule that names
// the field.
func policyReadsMemory(p *v1alpha1.RecreatePolicy) bool {
	for _, r := range p.Spec.Rules {
		if r.Builtin != "" {
			if b, ok := rules.Lookup(r.Builtin); ok && b.ReadsMemory {
				return true
			}
			continue
		}
		if r.Rego != "" && rules.ReadsMemory(r.Rego) {
			return true
		}
	}
	return false
}
