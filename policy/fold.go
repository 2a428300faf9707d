package policy

import (
	"context"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// foldable are the arithmetic built-ins a combined module's constant calls
// are folded with, and their number of operands.
var foldable = map[string]int{
	ast.Plus.Name: 2, ast.Minus.Name: 2, ast.Multiply.Name: 2, ast.Divide.Name: 2, ast.Rem.Name: 2,
	ast.Round.Name: 1, ast.Ceil.Name: 1, ast.Floor.Name: 1, ast.Abs.Name: 1,
}

// foldConstants replaces each arithmetic call of m on constant numbers by
// its result. Once a combined module's parameters are their values, a rule
// that says input.parameters.limitFraction * 100 pays for it when the
// policy is compiled rather than for every pod. The result comes from the
// built-in the evaluator would call, so it is the same number; a call that
// fails (a division by zero) is left for the evaluation to report.
func foldConstants(m *ast.Module) error {
	// A function of the module, or an import, may take a built-in's
	// name: then the module's calls are left as they are.
	for _, r := range m.Rules {
		if _, ok := foldable[r.Head.Name.String()]; ok {
			return nil
		}
	}
	for _, imp := range m.Imports {
		if _, ok := foldable[imp.Name().String()]; ok {
			return nil
		}
	}
	_, err := ast.Transform(folder{}, m)
	return err
}

type folder struct{}

func (folder) Transform(x any) (any, error) {
	if call, ok := x.(ast.Call); ok {
		if n, ok := fold(call); ok {
			return n, nil
		}
	}
	return x, nil
}

// fold computes v when it is a number, or a foldable call whose operands
// fold.
func fold(v ast.Value) (ast.Number, bool) {
	switch v := v.(type) {
	case ast.Number:
		return v, true
	case ast.Call:
		ref, ok := v[0].Value.(ast.Ref)
		if !ok {
			return "", false
		}
		name := ref.String()
		if arity, ok := foldable[name]; !ok || len(v)-1 != arity {
			return "", false
		}
		operands := make([]*ast.Term, len(v)-1)
		for i, t := range v[1:] {
			n, ok := fold(t.Value)
			if !ok {
				return "", false
			}
			operands[i] = ast.NewTerm(n)
		}
		var result ast.Number
		err := builtinFunc(name)(topdown.BuiltinContext{Context: context.Background()}, operands, func(t *ast.Term) error {
			result, ok = t.Value.(ast.Number)
			return nil
		})
		return result, err == nil && ok
	}
	return "", false
}
