package rules

import "github.com/open-policy-agent/opa/v1/ast"

// ReadsMemory reports whether a Rego module reads the memory signal: some
// term of it names the field memory (c.memory, c["memory"] or a path given
// to object.get). The manager samples the working set only for policies
// with such a rule. A module that does not parse reads nothing.
func ReadsMemory(src string) bool {
	return Names(src, "memory")
}

// Names reports whether some term of a Rego module names field: a
// reference's part (input.signals.queue, c["queue"]) or a string (a path
// given to object.get). A module that does not parse names nothing.
func Names(src, field string) bool {
	mod, err := ast.ParseModuleWithOpts("rule.rego", src, ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		if mod, err = ast.ParseModuleWithOpts("rule.rego", src, ast.ParserOptions{RegoVersion: ast.RegoV0}); err != nil {
			return false
		}
	}
	return names(mod, field)
}

func readsMemory(mod *ast.Module) bool { return names(mod, "memory") }

// names looks in the module's rules only: its package path and imports
// (package queue, import rego.v1) name no field.
func names(mod *ast.Module, field string) bool {
	found := false
	want := ast.String(field)
	for _, r := range mod.Rules {
		ast.WalkTerms(r, func(t *ast.Term) bool {
			if s, ok := t.Value.(ast.String); ok && s == want {
				found = true
			}
			return found
		})
	}
	return found
}
