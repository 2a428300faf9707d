package policy

import "github.com/open-policy-agent/opa/v1/ast"

// timeless reports whether the rules of modules give the same verdicts for
// the same pod at any time: none reads input.now (or the input as a whole,
// or by a variable key) or uses with, and every call is to a module's
// function or a deterministic built-in other than time.now_ns and print
// (whose output would be lost to a kept verdict).
func timeless(modules []*ast.Module) bool {
	ok := true
	for _, m := range modules {
		ast.WalkRefs(m, func(ref ast.Ref) bool {
			if ref[0].Equal(ast.InputRootDocument) && (len(ref) == 1 || !isString(ref[1]) || ref.HasPrefix(refInputNow)) {
				ok = false
			}
			return !ok
		})
		ast.WalkExprs(m, func(e *ast.Expr) bool {
			if len(e.With) > 0 || e.IsCall() && !timelessCall(e.Operator()) {
				ok = false
			}
			return !ok
		})
		ast.WalkTerms(m, func(t *ast.Term) bool {
			if call, isCall := t.Value.(ast.Call); isCall {
				if op, isRef := call[0].Value.(ast.Ref); !isRef || !timelessCall(op) {
					ok = false
				}
			}
			return !ok
		})
		if !ok {
			return false
		}
	}
	return true
}

func timelessCall(op ast.Ref) bool {
	b, ok := ast.BuiltinMap[op.String()]
	if !ok {
		// A function of a module: its body is walked too.
		return true
	}
	return !b.Nondeterministic && b.Name != ast.NowNanos.Name && b.Name != ast.Print.Name && b.Name != ast.InternalPrint.Name
}
