package policy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/topdown"
	"github.com/open-policy-agent/opa/v1/topdown/print"
)

// Program is a policy's compiled rules.
type Program struct {
	ref   PolicyRef
	rules []*compiledRule
	opts  *Options
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
	doc, err := p.opts.Pods.doc(t.Pod)
	if err != nil {
		return nil, err
	}
	podName := t.Pod.Namespace + "/" + t.Pod.Name
	candidates := make([]*ast.Term, 0, len(t.Containers))
	known := make(map[string]bool, len(t.Containers))
	for i := range t.Containers {
		c := &t.Containers[i]
		base, ok := doc.containers[c.Name]
		if !ok {
			return nil, fmt.Errorf("evaluate policy %s for pod %s: container %q is not in the pod", p.ref, podName, c.Name)
		}
		candidates = append(candidates, candidateValue(base, c))
		known[c.Name] = true
	}
	signals := ast.NewObjectWithCapacity(len(t.Signals))
	for name, v := range t.Signals {
		signals.Insert(ast.StringTerm(name), ast.FloatNumberTerm(v))
	}
	now := p.opts.Clock()
	shared := [][2]*ast.Term{
		{keyPod, doc.pod},
		{keyContainers, ast.ArrayTerm(candidates...)},
		{keySignals, ast.NewTerm(signals)},
		{keyNow, ast.StringTerm(now.UTC().Format(time.RFC3339Nano))},
		{keyPolicy, ast.ObjectTerm(
			[2]*ast.Term{ast.StringTerm("name"), ast.StringTerm(p.ref.Name)},
			[2]*ast.Term{ast.StringTerm("namespace"), ast.StringTerm(p.ref.Namespace)},
		)},
	}
	results := make([]RuleResult, len(p.rules))
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

func (p *Program) evalRule(ctx context.Context, r *compiledRule, input ast.Value, now time.Time, pod string, known map[string]bool, res *RuleResult) error {
	ctx, cancel := context.WithTimeout(ctx, p.opts.Deadline)
	defer cancel()
	rs, err := r.query.Eval(ctx,
		rego.EvalParsedInput(input),
		rego.EvalTime(now),
		rego.EvalPrintHook(printHook{p: p, rule: r.name, pod: pod}),
	)
	if err != nil {
		var te *topdown.Error
		if errors.As(err, &te) && te.Code == topdown.CancelErr || errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("%w (%s)", ErrDeadline, p.opts.Deadline)
		}
		return err
	}
	if len(rs) == 0 {
		return nil
	}
	b := rs[0].Bindings
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
	line := 0
	if pc.Location != nil {
		line = pc.Location.Row
	}
	log.V(1).Info("rego print", "policy", h.p.ref.String(), "rule", h.rule, "pod", h.pod, "line", line, "message", msg)
	return nil
}
