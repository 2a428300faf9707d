package policyspec

import (
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/rules"
)

// ReadsMemory reports whether one of a policy's rules reads the memory
// signal.
func ReadsMemory(spec *v1alpha1.RecreatePolicySpec) bool {
	for i := range spec.Rules {
		if RuleReadsMemory(&spec.Rules[i]) {
			return true
		}
	}
	return false
}

// RuleReadsMemory reports whether a rule reads the memory signal: a
// built-in rule that does, or an inline rule that names the field.
func RuleReadsMemory(r *v1alpha1.Rule) bool {
	if r.Builtin != "" {
		b, ok := rules.Lookup(r.Builtin)
		return ok && b.ReadsMemory
	}
	return r.Rego != "" && rules.ReadsMemory(r.Rego)
}
