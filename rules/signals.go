package rules

import "github.com/open-policy-agent/opa/v1/ast"

// ReadsMemory reports whether a Rego module reads the memory signal: some
// term of it names the field memory (c.memory, c["memory"] or a path given
// to object.get). The manager samples the working set only for policies
// with such a rule. A module that does not parse reads nothing.
func ReadsMemory(src string) bool {
	mod, err := ast.ParseModuleWithOpts("rule.rego", src, ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		if mod, err = ast.ParseModuleWithOpts("rule.rego", src, ast.ParserOptions{RegoVersion: ast.RegoV0}); err != nil {
			return false
		}
	}
	return readsMemory(mod)
}

func readsMemory(mod *ast.Module) bool {
	found := false
	memory := ast.String("memory")
	ast.WalkTerms(mod, func(t *ast.Term) bool {
		if s, ok := t.Value.(ast.String); ok && s == memory {
			found = true
		}
		return found
	})
	return found
}
