package policy

import (
	"context"
	"fmt"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
)

// Rule is one rule of a policy, ready to compile: a built-in's module or an
// inline one, and the built-in's parameters, already resolved.
type Rule struct {
	// Name is the rule's name in the policy.
	Name string
	// Builtin is the built-in rule's name, empty for inline Rego.
	Builtin string
	// Module is the Rego v1 source.
	Module string
	// Parameters become input.parameters.
	Parameters map[string]any
}

// compiledRule is one rule prepared for evaluation.
type compiledRule struct {
	name       string
	query      rego.PreparedEvalQuery
	parameters *ast.Term
}

// Query variables the results are bound to.
const (
	varRecreate = "recreate"
	varNoData   = "no_data"
)

// Compile compiles rules, each alone (so two inline rules may share a
// package name), in the sandbox of Capabilities. Every rule that fails is
// reported, as CompileErrors.
func Compile(ctx context.Context, rules []Rule) ([]*compiledRule, error) {
	var errs CompileErrors
	out := make([]*compiledRule, 0, len(rules))
	for i, r := range rules {
		cr, err := compileRule(ctx, r)
		if err != nil {
			errs = append(errs, compileErrors(r.Name, i, err)...)
			continue
		}
		out = append(out, cr)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// Check reports whether rules compile, with the same errors as Compile.
func Check(ctx context.Context, rules []Rule) error {
	_, err := Compile(ctx, rules)
	return err
}

func compileRule(ctx context.Context, r Rule) (*compiledRule, error) {
	module, err := ast.ParseModuleWithOpts(r.Name+".rego", r.Module, ast.ParserOptions{RegoVersion: ast.RegoV1, ProcessAnnotation: true})
	if err != nil {
		return nil, err
	}
	if !defines(module, varRecreate) {
		return nil, fmt.Errorf("the module does not define the rule %q (a set of {\"container\": NAME, \"reason\": TEXT})", varRecreate)
	}
	pkg := module.Package.Path
	// A comprehension collects the rule's value, so an undefined rule is
	// an empty result rather than an undefined query.
	body := ast.Body{
		ast.Assign.Expr(ast.VarTerm(varRecreate), ast.ArrayComprehensionTerm(ast.VarTerm("x"), ast.NewBody(ast.Assign.Expr(ast.VarTerm("x"), ast.NewTerm(pkg.Append(ast.StringTerm(varRecreate))))))),
	}
	if defines(module, varNoData) {
		body = append(body, ast.Assign.Expr(ast.VarTerm(varNoData), ast.ArrayComprehensionTerm(ast.VarTerm("y"), ast.NewBody(ast.Assign.Expr(ast.VarTerm("y"), ast.NewTerm(pkg.Append(ast.StringTerm(varNoData))))))))
	}
	for i, e := range body {
		e.Index = i
	}
	query, err := rego.New(
		rego.ParsedModule(module),
		rego.ParsedQuery(body),
		rego.Capabilities(Capabilities()),
		rego.SetRegoVersion(ast.RegoV1),
		rego.EnablePrintStatements(true),
	).PrepareForEval(ctx)
	if err != nil {
		return nil, err
	}
	params, err := ToValue(r.Parameters)
	if err != nil {
		return nil, fmt.Errorf("parameters: %w", err)
	}
	if r.Parameters == nil {
		params = ast.NewObject()
	}
	return &compiledRule{name: r.Name, query: query, parameters: ast.NewTerm(params)}, nil
}

// defines reports whether module has a rule whose name is name.
func defines(module *ast.Module, name string) bool {
	for _, r := range module.Rules {
		if ref := r.Head.Ref(); len(ref) > 0 && ref[0].Equal(ast.VarTerm(name)) {
			return true
		}
	}
	return false
}
