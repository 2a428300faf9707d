package policy

import "github.com/open-policy-agent/opa/v1/ast"

// timeless reports whether the rules of modules give the same verdicts for
// the same pod at any time: none reads input.now (or the input as a whole,
// or by a variable key) or uses with, and every call is to a module's
// function or a pure built-in (not time.now_ns, not print, whose output
// would be lost to a kept verdict).
func timeless(modules []*ast.Module) bool {
	for _, m := range modules {
		ok := true
		ast.WalkRefs(m, func(ref ast.Ref) bool {
			if ref[0].Equal(ast.InputRootDocument) && (len(ref) == 1 || !isString(ref[1]) || ref.HasPrefix(refInputNow)) {
				ok = false
			}
			return !ok
		})
		if !ok || usesWith(m) || !everyCall(m, timelessCall) {
			return false
		}
	}
	return true
}

func timelessCall(op ast.Ref) bool {
	builtin, pure := pureBuiltin(op.String())
	// Not a built-in: a function of a module, whose body is walked too.
	return !builtin || pure
}
