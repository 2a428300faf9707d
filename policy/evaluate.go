package policy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
	"github.com/open-policy-agent/opa/v1/topdown/print"
)

// Program is a policy's compiled rules: queries that evaluate them all at
// once, and each rule on its own for when those cannot be used.
type Program struct {
	ref   Ref
	rules []*compiledRule
	// stops counts, per rule, the evaluations of this policy's rule the
	// sandbox stopped in a row (rules are shared by the policies with the
	// same rules; their stops are not).
	stops    []ruleStops
	combined *combined
	// split is set once the combined query ran past the deadline or the
	// memory bound: from then on each rule runs on its own, so the culprit
	// alone waits for it or is stopped.
	split atomic.Bool
	// overrun is set once the combined query ran past its bounds in a
	// step the sandbox could not stop.
	overrun atomic.Pointer[Stop]
	// shape converts the fields of the pod the rules read, and only those.
	shape *podShape
	// timeless is set when no rule reads the time: a pod's matches then
	// change only with the pod, its candidates and its signals.
	timeless bool
	// perContainer is set when the rules judge each container on its own
	// (see perContainer): with timeless, an entry that did not change
	// keeps its results.
	perContainer bool
	// hasNative is set when a rule has its twin (Rule.Native), onlyNative
	// when every rule has.
	hasNative, onlyNative bool
	// policyTerm is input.policy.
	policyTerm *ast.Term
	// instantValues are the instant rules' values for this policy at the
	// latest time (see instantRules.valuesAt).
	instantValues atomic.Pointer[instantValues]
	// retired is set once the policy has a newer generation or is gone:
	// pods drop what they keep for the program (its entries and results)
	// at their next evaluation.
	retired atomic.Bool
	opts    *Options
}

// noSignals is input.signals of a pod without any.
var noSignals = ast.ObjectTerm()

// Policy names the policy the program was compiled for.
func (p *Program) Policy() Ref { return p.ref }

// Rules are the names of the program's rules, in the policy's order.
func (p *Program) Rules() []string {
	names := make([]string, len(p.rules))
	for i, r := range p.rules {
		names[i] = r.name
	}
	return names
}

// Match is a container a rule asks to recreate, and why.
type Match struct {
	Container string
	Reason    string
	// Force stops the container even while it is starting (the request's
	// forceRecreate): for a container hung in its start.
	Force bool
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

// Evaluate runs every rule of the program for the target pod at the time
// now (input.now and time.now_ns()), each bounded by the deadline. A
// rule's failure is in its result and does not stop the others; the error
// returned is for a target that cannot be converted. Pods evaluated at one
// time share what the rules compute from the time alone (see
// instantRules).
func (p *Program) Evaluate(ctx context.Context, t Target, now time.Time) ([]RuleResult, error) {
	if p.onlyNative {
		return p.judgeAlone(t, now)
	}
	podName := t.Pod.Namespace + "/" + t.Pod.Name
	in, err := p.inputOf(t)
	if err != nil {
		return nil, fmt.Errorf("evaluate policy %s for pod %s: %w", p.ref, podName, err)
	}
	// Once evaluated, the pod's document has taken over what it could from
	// the one before.
	defer in.doc.dropPrevious()
	results := make([]RuleResult, len(p.rules))
	if p.combined != nil && !p.split.Load() {
		err := p.evalCombined(ctx, now, podName, &in, results)
		if err == nil {
			return results, nil
		}
		// Evaluate the rules one by one to tell which one failed.
		if errors.Is(err, ErrDeadline) || errors.Is(err, ErrMemory) || errors.Is(err, ErrOverrun) {
			p.split.Store(true)
		}
		if errors.Is(err, ErrOverrun) {
			// Not again, one by one, for this pod: the step would run
			// past its bounds again. The policy halts on all its rules.
			rules := p.Rules()
			stop := &Stop{Rules: rules, Err: &EvalError{Policy: p.ref.String(), Rule: strings.Join(rules, ", "), Pod: podName, Err: err}}
			p.overrun.Store(stop)
			for i, r := range p.rules {
				results[i] = RuleResult{Rule: r.name, Err: stop.Err}
			}
			return results, nil
		}
	}
	// Rule by rule, the program keeps no results of the pod.
	in.results.forget(p)
	var shared [][2]*ast.Term
	var containers []*NativeContainer
	for i, r := range p.rules {
		res := RuleResult{Rule: r.name}
		var err error
		if r.native != nil {
			if containers == nil {
				containers, err = p.nativeContainers(t.Pod, t.Containers, nil)
			}
			if err == nil {
				recreate, noData := r.judge(containers, now)
				err = readResults(recreate, noData, in.names, &res)
			}
		} else {
			if shared == nil {
				shared = in.document(now, p.policyTerm, in.containerTerms())
			}
			input := ast.NewObject(append(slices.Clip(shared), [2]*ast.Term{keyParameters, r.parameters})...)
			err = p.evalRule(ctx, r, input, now, podName, in.names, &res)
		}
		if err != nil {
			res.Err = &EvalError{Policy: p.ref.String(), Rule: r.name, Pod: podName, Err: err}
		}
		if ctx.Err() == nil {
			p.stops[i].observe(res.Err)
		}
		results[i] = res
	}
	return results, nil
}

// evalCombined evaluates every rule with the combined queries. Any failure
// is returned as is, for the caller to attribute by evaluating rule by
// rule. No-data results depend only on the pod, the candidates and the
// pod's signals, not on the time, so they are evaluated again only when
// one of those changed; so are the matches of a timeless program.
func (p *Program) evalCombined(ctx context.Context, now time.Time, pod string, in *podInput, results []RuleResult) error {
	ids := in.entryIDs()
	kept := in.results.kept(p, in.pod, ids, in.signals)
	if kept != nil && kept.matches != nil {
		for i, r := range p.rules {
			results[i] = RuleResult{Rule: r.name, Matches: kept.matches[i], NoData: kept.noData[i]}
		}
		return nil
	}
	if kept == nil && p.timeless && p.perContainer && in.names.unique() {
		if done, err := p.evalChanged(ctx, ids, now, pod, in, results); done || err != nil {
			return err
		}
	}
	query := p.combined.recreate
	v := &keptResults{pod: in.pod, candidates: ids, signals: in.signals}
	if kept != nil {
		v.noData = kept.noData
	} else {
		query = p.combined.both
		v.noData = make([][]NoData, len(p.rules))
	}
	var b topdown.QueryResult
	if query != nil {
		input := ast.NewObject(in.document(now, p.policyTerm, in.containerTerms())...)
		var err error
		if b, err = p.eval(ctx, query, &p.combined.greedy, input, now, printHook{p: p, pod: pod}, p.combined.instants); err != nil {
			return err
		}
	}
	b, err := p.judgeNative(b, in, nil, now)
	if err != nil {
		return err
	}
	if p.timeless {
		v.matches = make([][]Match, len(p.rules))
	}
	complete := true
	for i, r := range p.rules {
		res := RuleResult{Rule: r.name}
		var err error
		res.Matches, err = readMatches(b[ast.Var(r.recreateVar)], in.names)
		if err == nil && kept == nil {
			v.noData[i], err = readNoData(b[ast.Var(r.noDataVar)])
		}
		if err != nil {
			complete = false
			res.Matches = nil
			res.Err = &EvalError{Policy: p.ref.String(), Rule: r.name, Pod: pod, Err: err}
		} else {
			res.NoData = v.noData[i]
			if v.matches != nil {
				v.matches[i] = res.Matches
			}
		}
		results[i] = res
	}
	if complete && (kept == nil || v.matches != nil) {
		in.results.keep(p, v)
	}
	return nil
}

// eval runs query within the deadline and the memory bound and returns
// its bindings (nil when the query is undefined). greedy marks the query
// once it went over the memory bound alone: from then on it is stopped at
// its bound without being run again alone.
func (p *Program) eval(ctx context.Context, query *query, greedy *atomic.Bool, input ast.Value, now time.Time, hook printHook, instants *instantRules) (topdown.QueryResult, error) {
	guard.alone.RLock()
	b, crowded, err := p.evalWatched(ctx, query, input, now, hook, instants)
	guard.alone.RUnlock()
	// Stopped at its memory bound (the first time), or past it after it
	// was stopped while others ran beside it: what it was charged may not
	// be its own.
	stopped := errors.Is(err, ErrMemory) && !greedy.Load()
	var over *overrunError
	chargedPast := crowded && errors.As(err, &over) && over.memory
	if !stopped && !chargedPast {
		return b, err
	}
	if crowded {
		// It was charged with what the evaluations beside it allocated
		// too: run it again alone, where what the process allocates is
		// its own.
		guard.alone.Lock()
		defer guard.alone.Unlock()
		b, _, err = p.evalWatched(ctx, query, input, now, hook, instants)
		if !errors.Is(err, ErrMemory) && !errors.As(err, &over) {
			guard.rescued.Add(1)
			return b, err
		}
	}
	greedy.Store(true)
	return b, err
}

// evalWatched runs query once, stopped at the deadline, by ctx, or by the
// memory guard; crowded tells that other evaluations ran beside it.
func (p *Program) evalWatched(ctx context.Context, query *query, input ast.Value, now time.Time, hook printHook, instants *instantRules) (topdown.QueryResult, bool, error) {
	// One cancel for the deadline, the caller's context and the memory
	// guard, fired by timers rather than by a goroutine per evaluation.
	cancel := topdown.NewCancel()
	deadline := time.AfterFunc(p.opts.Deadline, cancel.Cancel)
	defer deadline.Stop()
	stop := context.AfterFunc(ctx, cancel.Cancel)
	defer stop()
	watch := guard.begin(p, hook.rule, hook.pod, cancel)
	defer guard.end(watch)
	b, err := query.eval(ctx, ast.NewTerm(input), now, hook, cancel, instants.valuesAt(ctx, now, p.policyTerm, cancel, &p.instantValues))
	crowded := watch.crowded.Load()
	if why := watch.overrun.Load(); why != nil {
		final := *why
		if now := watch.overrunBy(time.Now(), allocated()); now.why != "" {
			final = now
		}
		if final.memory && crowded {
			// What it allocated after it was stopped may be its
			// neighbours': only a run alone tells, and records it
			// again if it is its own.
			watch.recorded.Wait()
			p.forgetOverrun()
		}
		return nil, crowded, &overrunError{final}
	}
	if err != nil {
		var te *topdown.Error
		if errors.As(err, &te) && te.Code == topdown.CancelErr {
			switch {
			case watch.over.Load():
				return nil, crowded, memoryError(p.opts.MemoryLimit)
			case ctx.Err() != nil:
				return nil, crowded, ctx.Err()
			}
			return nil, crowded, fmt.Errorf("%w (%s)", ErrDeadline, p.opts.Deadline)
		}
		return nil, crowded, err
	}
	return b, crowded, nil
}

func (p *Program) evalRule(ctx context.Context, r *compiledRule, input ast.Value, now time.Time, pod string, known candidateNames, res *RuleResult) error {
	b, err := p.eval(ctx, r.query, &r.greedy, input, now, printHook{p: p, rule: r.name, pod: pod}, nil)
	if err != nil || b == nil {
		return err
	}
	return readResults(b[ast.Var(varRecreate)], b[ast.Var(varNoData)], known, res)
}

// readResults reads a rule's recreate and no_data sets into res.
func readResults(recreate, noData *ast.Term, known candidateNames, res *RuleResult) error {
	matches, err := readMatches(recreate, known)
	if err != nil {
		return err
	}
	missing, err := readNoData(noData)
	if err != nil {
		return err
	}
	res.Matches, res.NoData = matches, missing
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
