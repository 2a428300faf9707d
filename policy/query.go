package policy

import (
	"context"
	"fmt"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/metrics"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/topdown"
	"github.com/open-policy-agent/opa/v1/topdown/print"
)

// query is a query compiled with its modules, evaluated by OPA's evaluator
// directly: the rego package's per-evaluation setup (option closures, a
// result set converted from the bindings, a goroutine or context per
// query) costs as much as a small rule does, and the engine needs none of
// it.
type query struct {
	compiler *ast.Compiler
	qc       ast.QueryCompiler
	body     ast.Body
	// store is empty: rules and parameters are all in modules. It is there
	// because the evaluator reads base documents through it.
	store storage.Store
}

// prepare compiles modules in the sandbox of Capabilities, then the query
// against them. Errors are OPA's ast.Errors, with locations.
func prepare(ctx context.Context, body ast.Body, modules ...*ast.Module) (*query, error) {
	c, err := compileModules(modules)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return compileQuery(c, body)
}

// compileModules compiles modules in the sandbox of Capabilities, with the
// bounded built-ins' calls renamed to their wrappers (see sandbox.go).
func compileModules(modules []*ast.Module) (*ast.Compiler, error) {
	c := ast.NewCompiler().
		WithCapabilities(compilerCapabilities()).
		WithStageAfterID(ast.StageBuildRequiredCapabilities, ast.CompilerStageDefinition{
			Name: "ScopeBuiltins", MetricName: "compile_stage_scope_builtins", Stage: scopeBuiltins,
		}).
		WithEnablePrintStatements(true).
		// Schemas are refused (refuseSchemas); were one to get through, it
		// is not loaded.
		WithUseTypeCheckAnnotations(false).
		WithDefaultRegoVersion(ast.RegoV1)
	byName := make(map[string]*ast.Module, len(modules))
	for i, m := range modules {
		byName[fmt.Sprintf("%d.rego", i)] = m
	}
	if c.Compile(byName); c.Failed() {
		return nil, c.Errors
	}
	return c, nil
}

// compileQuery compiles a query against the modules c compiled.
func compileQuery(c *ast.Compiler, body ast.Body) (*query, error) {
	qc := c.QueryCompiler().
		WithContext(ast.NewQueryContext()).
		WithEnablePrintStatements(true).
		WithStrict(false)
	compiled, err := qc.Compile(body)
	if err != nil {
		return nil, err
	}
	renameBounded(compiled)
	return &query{compiler: c, qc: qc, body: compiled, store: inmem.New()}, nil
}

// eval evaluates the query once and returns its first result's bindings,
// nil when it is undefined. cancel stops it from elsewhere; known are rule
// values known beforehand.
func (q *query) eval(ctx context.Context, input *ast.Term, now time.Time, hook print.Hook, cancel topdown.Cancel, known []cacheEntry) (topdown.QueryResult, error) {
	txn, err := q.store.NewTransaction(ctx)
	if err != nil {
		return nil, err
	}
	defer q.store.Abort(ctx, txn)
	cache := newSmallCache()
	defer cache.release()
	cache.know(known)
	var bindings topdown.QueryResult
	err = topdown.NewQuery(q.body).
		WithQueryCompiler(q.qc).
		WithCompiler(q.compiler).
		WithBuiltins(sandbox().byName).
		WithStore(q.store).
		WithTransaction(txn).
		WithInput(input).
		WithTime(now).
		WithPrintHook(hook).
		WithCancel(cancel).
		WithVirtualCache(cache).
		WithMetrics(metrics.NoOp()).
		Iter(ctx, func(qr topdown.QueryResult) error {
			if bindings == nil {
				bindings = qr
			}
			return nil
		})
	return bindings, err
}
