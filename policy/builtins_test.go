package policy

import (
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
)

// TestEveryBuiltinIsAudited: each built-in of this OPA version (and
// Rejuv's own) has exactly one verdict, each verdict names a built-in that
// exists, and a bounded built-in has its bound: a built-in a newer OPA
// adds fails here until it is audited.
func TestEveryBuiltinIsAudited(t *testing.T) {
	exists := map[string]bool{}
	all := ast.CapabilitiesForThisVersion().Builtins
	for _, b := range OwnBuiltins() {
		all = append(all, b.Decl)
	}
	for _, b := range all {
		exists[b.Name] = true
		if _, ok := auditOf(b.Name); !ok {
			t.Errorf("built-in %s is not audited: add it to policy/builtins.go with its verdict and why", b.Name)
		}
	}
	seen := map[string]bool{}
	for _, a := range audit {
		if a.why == "" {
			t.Errorf("%v: no reason given", a.names)
		}
		if (a.verdict == bounded) != (a.bound != nil || a.result != nil) {
			t.Errorf("%v: verdict %s with bound %v, result bound %v", a.names, a.verdict, a.bound != nil, a.result != nil)
		}
		for _, name := range a.names {
			if seen[name] {
				t.Errorf("built-in %s is audited twice", name)
			}
			seen[name] = true
			if !exists[name] {
				t.Errorf("built-in %s is audited but neither OPA nor Rejuv has such a built-in", name)
			}
			if a.verdict == bounded && builtinFunc(name) == nil {
				t.Errorf("built-in %s is bounded but has no implementation to wrap", name)
			}
		}
	}
	for _, b := range Capabilities().Builtins {
		if !permitted(b.Name) {
			t.Errorf("the sandbox's capabilities hold %s, which the audit denies", b.Name)
		}
	}
}
