package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/open-policy-agent/opa/v1/ast"
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
	// Native, when set, judges the pods instead of the module (a built-in
	// rule's twin in Go, bound to these parameters); the module is still
	// compiled and checked.
	Native NativeRule
}

// compiledRule is one rule prepared for evaluation on its own.
type compiledRule struct {
	name string
	// module is the parsed module, until the compilation is assembled.
	module *ast.Module
	// recreateVar and noDataVar bind the rule's sets in the combined
	// queries.
	recreateVar, noDataVar string

	hasNoData bool
	// setRecreate and setNoData tell that the module's recreate (no_data)
	// is a multi-value rule, a set even when empty, so queries can bind it
	// as it is; any other kind is collected into an array, see collect.
	setRecreate, setNoData bool
	query                  *query
	parameters             *ast.Term
	// native judges the pods instead of query when set.
	native NativeRule
	// greedy is set once the rule went over the memory bound alone.
	greedy atomic.Bool
}

// Query variables the results are bound to.
const (
	varRecreate = "recreate"
	varNoData   = "no_data"
)

// Compile compiles rules, each alone (so two inline rules may share a
// package name), in the sandbox of Capabilities. Every rule that fails is
// reported, as CompileErrors. The rules together are bounded by
// MaxPolicyCompiledBytes, checked before any is compiled.
func Compile(ctx context.Context, rules []Rule) ([]*compiledRule, error) {
	out, _, err := compileSized(ctx, rules)
	return out, err
}

// compileSized is Compile, also returning the rules' estimated compiled
// size.
func compileSized(ctx context.Context, rules []Rule) ([]*compiledRule, uint64, error) {
	var errs CompileErrors
	modules := make([]*ast.Module, len(rules))
	sizes := make([]uint64, len(rules))
	var total uint64
	for i, r := range rules {
		m, err := parseRule(r)
		if err != nil {
			errs = append(errs, compileErrors(r.Name, i, err)...)
			continue
		}
		modules[i], sizes[i] = m, compiledBytes(m)
		total += sizes[i]
	}
	if total > MaxPolicyCompiledBytes {
		return nil, 0, append(errs, policySizeError(rules, sizes, total))
	}
	out := make([]*compiledRule, 0, len(rules))
	for i, r := range rules {
		if modules[i] == nil {
			continue
		}
		cr, err := compileRule(ctx, r, modules[i])
		if err != nil {
			errs = append(errs, compileErrors(r.Name, i, err)...)
			continue
		}
		out = append(out, cr)
	}
	if len(errs) > 0 {
		return nil, 0, errs
	}
	return out, total, nil
}

// Check reports whether rules compile, with the same errors as Compile.
func Check(ctx context.Context, rules []Rule) error {
	_, err := Compile(ctx, rules)
	return err
}

// compileRule compiles the rule r, parsed as module.
func compileRule(ctx context.Context, r Rule, module *ast.Module) (*compiledRule, error) {
	if err := refuseSchemas(module); err != nil {
		return nil, err
	}
	if err := refuseUnkeptPodFields(module); err != nil {
		return nil, err
	}
	if err := refuseDeepValues(module); err != nil {
		return nil, err
	}
	if !defines(module, varRecreate) {
		return nil, fmt.Errorf("the module does not define the rule %q (a set of {\"container\": NAME, \"reason\": TEXT})", varRecreate)
	}
	cr := &compiledRule{
		name: r.Name, module: module, hasNoData: defines(module, varNoData),
		setRecreate: isSetRule(module, varRecreate), setNoData: isSetRule(module, varNoData),
		native: r.Native,
	}
	body := resultQuery(module.Package.Path, cr)
	var err error
	if cr.query, err = prepare(ctx, body, module.Copy()); err != nil {
		return nil, err
	}
	if err := refuseNonSets(cr.query.compiler, module); err != nil {
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

// resultQuery binds the variables recreate (and no_data) to the rule's
// sets.
func resultQuery(pkg ast.Ref, r *compiledRule) ast.Body {
	body := ast.Body{collect(pkg, varRecreate, varRecreate, r.setRecreate)}
	if r.hasNoData {
		body = append(body, collect(pkg, varNoData, varNoData, r.setNoData))
	}
	return numbered(body)
}

// collect binds v to the value of the rule of package pkg. A multi-value
// rule is a set even when no body holds, and is bound as it is; any other
// is collected by a comprehension, so that an undefined rule is an empty
// array rather than an undefined query.
func collect(pkg ast.Ref, rule, v string, set bool) *ast.Expr {
	ref := ast.NewTerm(pkg.Append(ast.StringTerm(rule)))
	if set {
		return ast.Equality.Expr(ast.VarTerm(v), ref)
	}
	x := ast.VarTerm("x_" + v)
	return ast.Equality.Expr(ast.VarTerm(v), ast.ArrayComprehensionTerm(x, ast.NewBody(ast.Equality.Expr(x, ref))))
}

// isSetRule reports whether every rule of module named name is a
// multi-value (contains) rule without a default.
func isSetRule(module *ast.Module, name string) bool {
	found := false
	for _, r := range module.Rules {
		if ref := r.Head.Ref(); len(ref) == 0 || !ref[0].Equal(ast.VarTerm(name)) {
			continue
		}
		if len(r.Head.Ref()) != 1 || r.Head.RuleKind() != ast.MultiValue || r.Default {
			return false
		}
		found = true
	}
	return found
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
	// recreate is nil when every rule has its twin (Rule.Native).
	recreate *query
	// both binds the variables of both, for a pod whose no-data results
	// are not known yet: one evaluation instead of two.
	both *query
	// instants evaluates the rules that depend only on the time, once per
	// time; nil when there are none.
	instants *instantRules
	// greedy is set once the combined queries went over the memory bound
	// alone.
	greedy atomic.Bool
}

// combine prepares the combined queries: each module moves to its own
// package, and its reads of input.parameters become the parameters' values
// (or reads of a constant document, for a path with a variable in it),
// whose arithmetic is then done once (foldConstants).
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
				if v := lookup(r.parameters.Value, ref[2:]); v != nil {
					return v, nil
				}
				return paramsRef.Concat(ref[2:]), nil
			}
			return ref, nil
		}); err != nil {
			return nil, err
		}
		if err := foldConstants(m); err != nil {
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
		if r.native != nil {
			// Its twin binds its sets (Program.judgeNative).
			continue
		}
		recreate = append(recreate, collect(m.Package.Path, varRecreate, r.recreateVar, r.setRecreate))
		if r.hasNoData {
			none = append(none, collect(m.Package.Path, varNoData, r.noDataVar, r.setNoData))
		}
	}
	pm, err := ast.ParseModuleWithOpts("parameters.rego", params.String(), ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		return nil, err
	}
	modules = append(modules, pm)
	compiler, err := compileModules(modules)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c := &combined{}
	if len(recreate) == 0 {
		// Every rule has its twin: no query to run.
		return c, nil
	}
	if c.recreate, err = compileQuery(compiler, numbered(recreate)); err != nil {
		return nil, err
	}
	if c.both, err = compileQuery(compiler, numbered(append(slices.Clone(recreate), none...))); err != nil {
		return nil, err
	}
	if c.instants, err = findInstantRules(compiler); err != nil {
		return nil, err
	}
	return c, nil
}

// lookup returns the value at path in v, nil unless every step of the
// path is a constant key that is there. A parameter read this way becomes
// its value in the module: reading it from a document costs the evaluator
// a rule evaluation for every pod.
func lookup(v ast.Value, path ast.Ref) ast.Value {
	for _, key := range path {
		if !ast.IsScalar(key.Value) {
			return nil
		}
		var next *ast.Term
		switch c := v.(type) {
		case ast.Object:
			next = c.Get(key)
		case *ast.Array:
			if i, ok := key.Value.(ast.Number); ok {
				if n, ok := i.Int(); ok && n >= 0 && n < c.Len() {
					next = c.Elem(n)
				}
			}
		}
		if next == nil {
			return nil
		}
		v = next.Value
	}
	return v
}

// traits are what a program needs to know of its rules' modules, found
// once per compilation.
type traits struct {
	podPaths               *podPaths
	timeless, perContainer bool
}

// assemble finishes a compilation: the combined queries (nil, with the
// reason, when the rules cannot be combined) and the rules' traits. The
// parsed modules are then dropped: the compilers keep their own copies,
// and a parsed module costs about as much as the compiled rule (a
// literal table's terms each keep their location in the source).
func assemble(ctx context.Context, rules []*compiledRule) (*combined, traits, error) {
	modules := make([]*ast.Module, len(rules))
	for i, r := range rules {
		modules[i] = r.module
	}
	t := traits{podPaths: readPodPaths(modules), timeless: timeless(modules), perContainer: perContainer(modules)}
	c, err := combine(ctx, rules)
	for _, r := range rules {
		r.module = nil
	}
	return c, t, err
}

func newProgram(ref Ref, rules []*compiledRule, combined *combined, t traits, opts *Options) *Program {
	policy := ast.ObjectTerm(
		[2]*ast.Term{ast.StringTerm("name"), ast.StringTerm(ref.Name)},
		[2]*ast.Term{ast.StringTerm("namespace"), ast.StringTerm(ref.Namespace)},
	)
	program := &Program{ref: ref, rules: rules, combined: combined, stops: make([]ruleStops, len(rules)), shape: newPodShape(t.podPaths),
		timeless: t.timeless, perContainer: t.perContainer, policyTerm: policy, opts: opts}
	program.onlyNative = len(rules) > 0
	for _, r := range rules {
		program.hasNative = program.hasNative || r.native != nil
		program.onlyNative = program.onlyNative && r.native != nil
	}
	return program
}

// defines reports whether module has a rule whose name is name.
func defines(module *ast.Module, name string) bool {
	return firstRule(module, name) != nil
}

// refuseSchemas refuses METADATA schemas: OPA resolves a schema's
// references (file: URLs, other schemas) when it type-checks, which would
// read the manager's files from inside the webhook and tell the refusal's
// reader what they hold.
func refuseSchemas(module *ast.Module) error {
	var errs ast.Errors
	for _, a := range module.Annotations {
		if len(a.Schemas) > 0 {
			errs = append(errs, ast.NewError(ast.CompileErr, a.Location, "METADATA schemas are not allowed in rules: a schema may refer to files and URLs"))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}
