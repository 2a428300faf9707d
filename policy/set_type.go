package policy

import (
	"slices"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/types"
)

// refuseNonSets refuses a module whose recreate (or no_data) rule the type
// checker proves is never a set: a string, a number, an object or an array
// would fail on every pod at evaluation, so the policy is refused when it
// is written instead.
func refuseNonSets(c *ast.Compiler, module *ast.Module) error {
	var errs ast.Errors
	for _, name := range []string{varRecreate, varNoData} {
		rule := firstRule(module, name)
		if rule == nil {
			continue
		}
		t := c.TypeEnv.GetByRef(module.Package.Path.Append(ast.StringTerm(name)))
		if maySet(t) {
			continue
		}
		errs = append(errs, ast.NewError(ast.TypeErr, rule.Location,
			"%s is %s, never a set: write %s contains {\"container\": NAME, %s} if ...", name, types.Sprint(t), name, secondKey(name)))
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// maySet says whether a value of type t can be a set; an unknown type can.
func maySet(t types.Type) bool {
	switch t := t.(type) {
	case nil, *types.Set:
		return true
	case types.Any:
		return len(t) == 0 || slices.ContainsFunc(t, maySet)
	}
	return false
}

// firstRule is the module's first rule named name, or nil.
func firstRule(module *ast.Module, name string) *ast.Rule {
	for _, r := range module.Rules {
		if ref := r.Head.Ref(); len(ref) > 0 && ref[0].Equal(ast.VarTerm(name)) {
			return r
		}
	}
	return nil
}

// secondKey is what an item of the named set holds beside its container.
func secondKey(name string) string {
	if name == varNoData {
		return `"signal": TEXT`
	}
	return `"reason": TEXT`
}
