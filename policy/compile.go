package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

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

// compiledRule is one rule prepared for evaluation on its own.
type compiledRule struct {
	name string
	// recreateVar and noDataVar bind the rule's sets in the combined
	// queries.
	recreateVar, noDataVar string

	module     *ast.Module
	hasNoData  bool
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
	cr := &compiledRule{name: r.Name, module: module, hasNoData: defines(module, varNoData)}
	body := resultQuery(module.Package.Path, cr.hasNoData)
	if cr.query, err = prepare(ctx, body, module.Copy()); err != nil {
		return nil, err
	}
	params, err := ToValue(r.Parameters)
	if err != nil {
		return nil, fmt.Errorf("parameters: %w", err)
	}
	if r.Parameters == nil {
		params = ast.NewObject()
	}
	cr.parameters = ast.NewTerm(params)
	return cr, nil
}

func prepare(ctx context.Context, query ast.Body, modules ...*ast.Module) (rego.PreparedEvalQuery, error) {
	opts := []func(*rego.Rego){
		rego.ParsedQuery(query),
		rego.Capabilities(Capabilities()),
		rego.SetRegoVersion(ast.RegoV1),
		rego.EnablePrintStatements(true),
	}
	for _, m := range modules {
		opts = append(opts, rego.ParsedModule(m))
	}
	return rego.New(opts...).PrepareForEval(ctx)
}

// resultQuery binds the variables recreate (and no_data) to the rule's
// sets.
func resultQuery(pkg ast.Ref, hasNoData bool) ast.Body {
	body := ast.Body{collect(pkg, varRecreate, varRecreate)}
	if hasNoData {
		body = append(body, collect(pkg, varNoData, varNoData))
	}
	return numbered(body)
}

// collect binds v to the value of the rule of package pkg. A comprehension
// collects it, so an undefined rule is an empty result rather than an
// undefined query.
func collect(pkg ast.Ref, rule, v string) *ast.Expr {
	x := ast.VarTerm("x_" + v)
	return ast.Assign.Expr(ast.VarTerm(v), ast.ArrayComprehensionTerm(x, ast.NewBody(ast.Assign.Expr(x, ast.NewTerm(pkg.Append(ast.StringTerm(rule)))))))
}

func numbered(body ast.Body) ast.Body {
	for i, e := range body {
		e.Index = i
	}
	return body
}

// combinedPackage is where the combined query finds rule i's module and
// its parameters.
func combinedPackage(i int) ast.Ref {
	return ast.MustParseRef(fmt.Sprintf("data.rejuv.policy.r%d", i))
}

var parametersRoot = ast.MustParseRef("data.rejuv.parameters")

// combined is a policy's rules as queries that each evaluate every rule
// at once, so that a pod costs one evaluation whatever the number of
// rules: recreate binds rI to rule I's recreate set, both also binds nI to
// its no_data set.
type combined struct {
	recreate rego.PreparedEvalQuery
	// both binds the variables of both, for a pod whose no-data results
	// are not known yet: one evaluation instead of two.
	both rego.PreparedEvalQuery
}

// combine prepares the combined queries: each module moves to its own
// package, and its reads of input.parameters become reads of constants.
// Modules that refer to their own package by its full path cannot move; for
// those (combine fails) the rules are evaluated one by one.
func combine(ctx context.Context, rules []*compiledRule) (*combined, error) {
	var (
		modules        []*ast.Module
		recreate, none ast.Body
		params         strings.Builder
	)
	params.WriteString("package rejuv.parameters\n")
	for i, r := range rules {
		m := r.module.Copy()
		m.Package.Path = combinedPackage(i)
		paramsRef := parametersRoot.Append(ast.StringTerm(fmt.Sprintf("r%d", i)))
		if _, err := ast.TransformRefs(m, func(ref ast.Ref) (ast.Value, error) {
			if len(ref) >= 2 && ref[0].Equal(ast.InputRootDocument) && ref[1].Equal(ast.StringTerm("parameters")) {
				return paramsRef.Concat(ref[2:]), nil
			}
			return ref, nil
		}); err != nil {
			return nil, err
		}
		modules = append(modules, m)
		value, err := ast.JSON(r.parameters.Value)
		if err != nil {
			return nil, err
		}
		raw, err := json.Marshal(value)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&params, "r%d := %s\n", i, raw)
		r.recreateVar, r.noDataVar = fmt.Sprintf("r%d", i), fmt.Sprintf("n%d", i)
		recreate = append(recreate, collect(m.Package.Path, varRecreate, r.recreateVar))
		if r.hasNoData {
			none = append(none, collect(m.Package.Path, varNoData, r.noDataVar))
		}
	}
	pm, err := ast.ParseModuleWithOpts("parameters.rego", params.String(), ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		return nil, err
	}
	modules = append(modules, pm)
	c := &combined{}
	if c.recreate, err = prepare(ctx, numbered(recreate), modules...); err != nil {
		return nil, err
	}
	if c.both, err = prepare(ctx, numbered(append(slices.Clone(recreate), none...)), modules...); err != nil {
		return nil, err
	}
	return c, nil
}

func newProgram(ref Ref, rules []*compiledRule, opts *Options) *Program {
	modules := make([]*ast.Module, len(rules))
	for i, r := range rules {
		modules[i] = r.module
	}
	paths := readPodPaths(modules)
	policy := ast.ObjectTerm(
		[2]*ast.Term{ast.StringTerm("name"), ast.StringTerm(ref.Name)},
		[2]*ast.Term{ast.StringTerm("namespace"), ast.StringTerm(ref.Namespace)},
	)
	return &Program{ref: ref, rules: rules, podPaths: paths, podShape: paths.key(), policyTerm: policy, opts: opts}
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
