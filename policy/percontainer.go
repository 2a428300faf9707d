package policy

import (
	"github.com/open-policy-agent/opa/v1/ast"
)

var (
	refInputContainers = ast.MustParseRef("input.containers")
	memberOp           = ast.Member.Ref()
)

// perContainer reports whether the rules judge each candidate container on
// its own, as the built-in rules do: every recreate and no_data definition
// iterates input.containers once, at the top of its body (some c in
// input.containers), and yields results for c.name alone, and nothing else
// in the modules reads input.containers, input as a whole, the recreate or
// no_data sets, other documents, or uses with. A pod's results are then the
// union of what each of its entries gives alone, so an entry that did not
// change keeps what it gave (see Program.evalChanged).
func perContainer(modules []*ast.Module) bool {
	for _, m := range modules {
		if usesWith(m) || !modulePerContainer(m) {
			return false
		}
	}
	return true
}

func modulePerContainer(m *ast.Module) bool {
	for _, imp := range m.Imports {
		if path, ok := imp.Path.Value.(ast.Ref); ok && (path[0].Equal(ast.InputRootDocument) || path[0].Equal(ast.DefaultRootDocument)) {
			return false
		}
	}
	iterations := 0
	for _, r := range m.Rules {
		head := r.Head.Ref()
		if len(head) > 0 && (head[0].Equal(ast.VarTerm(varRecreate)) || head[0].Equal(ast.VarTerm(varNoData))) {
			if len(head) != 1 || r.Head.RuleKind() != ast.MultiValue || r.Default {
				return false
			}
			c, ok := containerIteration(r.Body)
			if !ok || !yieldsFor(r.Head.Key, c) {
				return false
			}
			iterations++
		}
	}
	readsContainers, ok := 0, true
	for _, r := range m.Rules {
		for rule := r; rule != nil && ok; rule = rule.Else {
			parts := []any{rule.Body}
			for _, t := range []*ast.Term{rule.Head.Key, rule.Head.Value} {
				if t != nil {
					parts = append(parts, t)
				}
			}
			for _, part := range parts {
				ast.WalkRefs(part, func(ref ast.Ref) bool {
					switch {
					case ref[0].Equal(ast.DefaultRootDocument):
						ok = false
					case !ref[0].Equal(ast.InputRootDocument):
					case len(ref) == 1 || !isString(ref[1]):
						ok = false
					case ref[1].Equal(refInputContainers[1]):
						readsContainers++
					}
					return !ok
				})
				// input alone is a reference of one term (above); the sets
				// are variables.
				ast.WalkVars(part, func(v ast.Var) bool {
					if v == varRecreate || v == varNoData {
						ok = false
					}
					return !ok
				})
			}
		}
		if !ok {
			return false
		}
	}
	// Each iteration reads input.containers once; any other read sees every
	// container at once.
	return readsContainers == iterations
}

// containerIteration finds the one `some c in input.containers` among the
// body's expressions and gives c.
func containerIteration(body ast.Body) (ast.Var, bool) {
	var found ast.Var
	n := 0
	for _, e := range body {
		decl, ok := e.Terms.(*ast.SomeDecl)
		if !ok || len(decl.Symbols) != 1 {
			continue
		}
		call, ok := decl.Symbols[0].Value.(ast.Call)
		if !ok || len(call) != 3 {
			continue
		}
		if op, ok := call[0].Value.(ast.Ref); !ok || !op.Equal(memberOp) {
			continue
		}
		c, isVar := call[1].Value.(ast.Var)
		ref, isRef := call[2].Value.(ast.Ref)
		if isVar && isRef && ref.Equal(refInputContainers) {
			found = c
			n++
		}
	}
	return found, n == 1
}

// yieldsFor reports whether a result key names container c: c.name, or an
// object whose container is c.name.
func yieldsFor(key *ast.Term, c ast.Var) bool {
	if key == nil {
		return false
	}
	if obj, ok := key.Value.(ast.Object); ok {
		key = obj.Get(keyContainer)
		if key == nil {
			return false
		}
	}
	ref, ok := key.Value.(ast.Ref)
	return ok && len(ref) == 2 && ref[0].Value.Compare(c) == 0 && ref[1].Equal(keyName)
}
