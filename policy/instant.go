package policy

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// instantRules are the complete rules of a combined program whose value
// depends on nothing but input.now, input.policy, constants, deterministic
// built-ins and other such rules: the now_ns and cutoff_ns of the built-in
// rules, for example. Their value is the same for every pod evaluated at
// one time, so they are evaluated once per time and handed to each pod's
// evaluation as known values, instead of being evaluated again per pod.
type instantRules struct {
	refs  []ast.Ref
	query *query
}

type instantValues struct {
	now     time.Time
	entries []cacheEntry
}

// findInstantRules finds the instant rules among the rules c compiled and
// prepares the query that evaluates them; nil when there are none.
func findInstantRules(c *ast.Compiler) (*instantRules, error) {
	paths := instantPaths(c)
	if len(paths) == 0 {
		return nil, nil
	}
	ir := &instantRules{}
	var body ast.Body
	for i, path := range paths {
		ir.refs = append(ir.refs, path)
		x := ast.VarTerm(fmt.Sprintf("x%d", i))
		body = append(body, ast.Equality.Expr(ast.VarTerm(fmt.Sprintf("v%d", i)), ast.ArrayComprehensionTerm(x, ast.NewBody(ast.Equality.Expr(x, ast.NewTerm(path))))))
	}
	q, err := compileQuery(c, numbered(body))
	if err != nil {
		return nil, err
	}
	ir.query = q
	return ir, nil
}

// valuesAt returns the rules' values at now for the policy, as cache
// entries; nil when they cannot be evaluated (each pod's evaluation then
// evaluates them, and reports what went wrong). last holds the policy's
// values for the latest time asked for (the controller evaluates all the
// pods of a pass at the pass's time): policies with the same rules share
// the rules, each its own values.
func (ir *instantRules) valuesAt(ctx context.Context, now time.Time, policy *ast.Term, cancel topdown.Cancel, last *atomic.Pointer[instantValues]) []cacheEntry {
	if ir == nil {
		return nil
	}
	if v := last.Load(); v != nil && v.now.Equal(now) {
		return v.entries
	}
	input := ast.NewObject(
		[2]*ast.Term{keyNow, ast.StringTerm(now.UTC().Format(time.RFC3339Nano))},
		[2]*ast.Term{keyPolicy, policy},
	)
	b, err := ir.query.eval(ctx, ast.NewTerm(input), now, nil, cancel, nil)
	if err != nil || b == nil {
		return nil
	}
	entries := make([]cacheEntry, 0, len(ir.refs))
	for i, ref := range ir.refs {
		arr, ok := b[ast.Var(fmt.Sprintf("v%d", i))].Value.(*ast.Array)
		if !ok {
			return nil
		}
		e := cacheEntry{ref: ref, undefined: arr.Len() == 0}
		if arr.Len() > 0 {
			e.value = arr.Elem(0)
		}
		entries = append(entries, e)
	}
	last.Store(&instantValues{now: now, entries: entries})
	return entries
}

// instantPaths are the paths of the instant rules: complete rules without
// arguments none of whose definitions reads the input other than now and
// policy, calls a function of a module, calls a nondeterministic built-in
// other than time.now_ns or print, uses with, or reads another rule that
// is not an instant rule.
func instantPaths(c *ast.Compiler) []ast.Ref {
	byPath := map[string][]*ast.Rule{}
	refs := map[string]ast.Ref{}
	for _, m := range c.Modules {
		for _, r := range m.Rules {
			path := r.Ref().GroundPrefix()
			key := path.String()
			refs[key] = path
			byPath[key] = append(byPath[key], r)
		}
	}
	instant := map[string]bool{}
	for key, rules := range byPath {
		instant[key] = true
		for _, r := range rules {
			if len(r.Head.Args) > 0 || r.Head.RuleKind() != ast.SingleValue || len(r.Head.Ref()) != 1 || !pureOfPods(r) {
				instant[key] = false
			}
		}
	}
	// Drop the rules that read rules that are not instant, until none does.
	for changed := true; changed; {
		changed = false
		for key, ok := range instant {
			if !ok {
				continue
			}
			for _, r := range byPath[key] {
				if !readsOnlyInstant(r, instant, refs) {
					instant[key], changed = false, true
					break
				}
			}
		}
	}
	var out []ast.Ref
	for key, ok := range instant {
		if ok {
			out = append(out, refs[key])
		}
	}
	return out
}

var (
	refInputNow    = ast.MustParseRef("input.now")
	refInputPolicy = ast.MustParseRef("input.policy")
)

// pureOfPods reports whether rule r reads no input but now and policy and
// calls only deterministic built-ins (and time.now_ns, the time of the
// evaluation), without with.
func pureOfPods(r *ast.Rule) bool {
	ok := true
	ast.WalkRefs(r, func(ref ast.Ref) bool {
		if ref[0].Equal(ast.InputRootDocument) && !ref.HasPrefix(refInputNow) && !ref.HasPrefix(refInputPolicy) {
			ok = false
		}
		return !ok
	})
	return ok && !usesWith(r) && everyCall(r, func(op ast.Ref) bool {
		if op[0].Equal(ast.DefaultRootDocument) {
			// A function of a module; readsOnlyInstant rejects it too.
			return false
		}
		builtin, pure := pureBuiltin(op.String())
		return builtin && (pure || op.String() == ast.NowNanos.Name)
	})
}

// pureBuiltin tells whether name is a built-in, and whether it gives the
// same result for the same operands with nothing lost when that result is
// reused: not a nondeterministic one (time.now_ns among them), not print.
func pureBuiltin(name string) (builtin, pure bool) {
	b := declOf(name)
	if b == nil {
		return false, false
	}
	name = opaName(name)
	return true, !b.Nondeterministic && name != ast.Print.Name && name != ast.InternalPrint.Name
}

// everyCall reports whether ok holds for the operator of every call in x:
// the expressions that are calls, and the calls nested in terms.
func everyCall(x any, ok func(op ast.Ref) bool) bool {
	all := true
	ast.WalkExprs(x, func(e *ast.Expr) bool {
		if e.IsCall() && !ok(e.Operator()) {
			all = false
		}
		return !all
	})
	ast.WalkTerms(x, func(t *ast.Term) bool {
		if call, isCall := t.Value.(ast.Call); isCall {
			if op, isRef := call[0].Value.(ast.Ref); !isRef || !ok(op) {
				all = false
			}
		}
		return !all
	})
	return all
}

// usesWith reports whether an expression in x uses with.
func usesWith(x any) bool {
	with := false
	ast.WalkExprs(x, func(e *ast.Expr) bool {
		with = with || len(e.With) > 0
		return with
	})
	return with
}

// readsOnlyInstant reports whether every document r reads is an instant
// rule (or a part of one's value).
func readsOnlyInstant(r *ast.Rule, instant map[string]bool, refs map[string]ast.Ref) bool {
	ok := true
	ast.WalkRefs(r, func(ref ast.Ref) bool {
		if !ref[0].Equal(ast.DefaultRootDocument) {
			return false
		}
		found := false
		for key, isInstant := range instant {
			if isInstant && ref.HasPrefix(refs[key]) {
				found = true
				break
			}
		}
		if !found {
			ok = false
		}
		return !ok
	})
	return ok
}
