package policy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/topdown"
	"github.com/open-policy-agent/opa/v1/topdown/print"
)

// Program is a policy's compiled rules: one query that evaluates them all,
// and each rule on its own for when the combined one cannot be used.
type Program struct {
	ref      PolicyRef
	rules    []*compiledRule
	combined *rego.PreparedEvalQuery
	// split is set once the combined query ran past the deadline: from then
	// on each rule runs on its own, so the culprit alone waits for it.
	split atomic.Bool
	// podPaths are the fields of the pod the rules read, podShape their
	// cache key: only those are converted.
	podPaths *podPaths
	podShape string
	opts     *Options
}

// Policy names the policy the program was compiled for.
func (p *Program) Policy() PolicyRef { return p.ref }

// Match is a container a rule asks to recreate, and why.
type Match struct {
	Container string
	Reason    string
}

// NoData is a container a rule could not judge because a signal it needs
// is missing.
type NoData struct {
	Container string
	Signal    string
}

// RuleResult is one rule's verdict for one pod. Err is an *EvalError.
type RuleResult struct {
	Rule    string
	Matches []Match
	NoData  []NoData
	Err     error
}

// Top-level keys of the input document.
var (
	keyPod        = ast.StringTerm("pod")
	keyContainers = ast.StringTerm("containers")
	keySignals    = ast.StringTerm("signals")
	keyParameters = ast.StringTerm("parameters")
	keyNow        = ast.StringTerm("now")
	keyPolicy     = ast.StringTerm("policy")
)

// Evaluate runs every rule of the program for the target pod, each bounded
// by the deadline. A rule's failure is in its result and does not stop the
// others; the error returned is for a target that cannot be converted.
func (p *Program) Evaluate(ctx context.Context, t Target) ([]RuleResult, error) {
	podName := t.Pod.Namespace + "/" + t.Pod.Name
	doc := p.opts.Pods.doc(t.Pod)
	podValue, err := doc.podValue(t.Pod, p.podPaths, p.podShape)
	if err != nil {
		return nil, fmt.Errorf("evaluate policy %s: %w", p.ref, err)
	}
	candidates := make([]*ast.Term, 0, len(t.Containers))
	known := make(map[string]bool, len(t.Containers))
	for i := range t.Containers {
		c := &t.Containers[i]
		entry, ok := doc.candidate(c)
		if !ok {
			return nil, fmt.Errorf("evaluate policy %s for pod %s: container %q is not in the pod", p.ref, podName, c.Name)
		}
		candidates = append(candidates, entry)
		known[c.Name] = true
	}
	signals := ast.NewObjectWithCapacity(len(t.Signals))
	for name, v := range t.Signals {
		signals.Insert(ast.StringTerm(name), ast.FloatNumberTerm(v))
	}
	now := p.opts.Clock()
	shared := [][2]*ast.Term{
		{keyPod, podValue},
		{keyContainers, ast.ArrayTerm(candidates...)},
		{keySignals, ast.NewTerm(signals)},
		{keyNow, ast.StringTerm(now.UTC().Format(time.RFC3339Nano))},
		{keyPolicy, ast.ObjectTerm(
			[2]*ast.Term{ast.StringTerm("name"), ast.StringTerm(p.ref.Name)},
			[2]*ast.Term{ast.StringTerm("namespace"), ast.StringTerm(p.ref.Namespace)},
		)},
	}
	results := make([]RuleResult, len(p.rules))
	if p.combined != nil && !p.split.Load() {
		err := p.evalCombined(ctx, ast.NewObject(shared...), now, podName, known, results)
		if err == nil {
			return results, nil
		}
		// Evaluate the rules one by one to tell which one failed.
		if errors.Is(err, ErrDeadline) {
			p.split.Store(true)
		}
	}
	for i, r := range p.rules {
		input := ast.NewObject(append(shared[:len(shared):len(shared)], [2]*ast.Term{keyParameters, r.parameters})...)
		res := RuleResult{Rule: r.name}
		if err := p.evalRule(ctx, r, input, now, podName, known, &res); err != nil {
			res.Err = &EvalError{Policy: p.ref.String(), Rule: r.name, Pod: podName, Err: err}
		}
		results[i] = res
	}
	return results, nil
}

// evalCombined evaluates every rule in one query. Any failure is returned
// as is, for the caller to attribute by evaluating rule by rule.
func (p *Program) evalCombined(ctx context.Context, input ast.Value, now time.Time, pod string, known map[string]bool, results []RuleResult) error {
	b, err := p.eval(ctx, p.combined, input, now, printHook{p: p, pod: pod})
	if err != nil || b == nil {
		return err
	}
	for i, r := range p.rules {
		res := RuleResult{Rule: r.name}
		if res.Matches, err = readMatches(b[fmt.Sprintf("r%d", i)], known); err == nil {
			res.NoData, err = readNoData(b[fmt.Sprintf("n%d", i)])
		}
		if err != nil {
			res.Matches, res.NoData = nil, nil
			res.Err = &EvalError{Policy: p.ref.String(), Rule: r.name, Pod: pod, Err: err}
		}
		results[i] = res
	}
	return nil
}

// eval runs query within the deadline and returns its bindings (nil when
// the query is undefined).
func (p *Program) eval(ctx context.Context, query *rego.PreparedEvalQuery, input ast.Value, now time.Time, hook printHook) (rego.Vars, error) {
	ctx, cancel := context.WithTimeout(ctx, p.opts.Deadline)
	defer cancel()
	rs, err := query.Eval(ctx, rego.EvalParsedInput(input), rego.EvalTime(now), rego.EvalPrintHook(hook), rego.EvalGenerateJSON(keepTerms))
	if err != nil {
		var te *topdown.Error
		if errors.As(err, &te) && te.Code == topdown.CancelErr || errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("%w (%s)", ErrDeadline, p.opts.Deadline)
		}
		return nil, err
	}
	if len(rs) == 0 {
		return nil, nil
	}
	return rs[0].Bindings, nil
}

func (p *Program) evalRule(ctx context.Context, r *compiledRule, input ast.Value, now time.Time, pod string, known map[string]bool, res *RuleResult) error {
	b, err := p.eval(ctx, &r.query, input, now, printHook{p: p, rule: r.name, pod: pod})
	if err != nil || b == nil {
		return err
	}
	matches, err := readMatches(b[varRecreate], known)
	if err != nil {
		return err
	}
	noData, err := readNoData(b[varNoData])
	if err != nil {
		return err
	}
	res.Matches, res.NoData = matches, noData
	return nil
}

// printHook sends Rego print output to the debug log, with the policy,
// rule and pod it came from.
type printHook struct {
	p         *Program
	rule, pod string
}

func (h printHook) Print(pc print.Context, msg string) error {
	log := h.p.opts.Log
	if log.GetSink() == nil {
		return nil
	}
	line, rule := 0, h.rule
	if pc.Location != nil {
		line = pc.Location.Row
		// Each module is parsed as file RULE.rego, which names the rule
		// when the combined query printed.
		if name, ok := strings.CutSuffix(pc.Location.File, ".rego"); ok {
			rule = name
		}
	}
	log.V(1).Info("rego print", "policy", h.p.ref.String(), "rule", rule, "pod", h.pod, "line", line, "message", msg)
	return nil
}
