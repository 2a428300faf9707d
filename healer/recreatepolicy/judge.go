package recreatepolicy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/planner"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
	"github.com/rejuv-dev/rejuv/healer/signals"
	"github.com/rejuv-dev/rejuv/policy"
	"github.com/rejuv-dev/rejuv/rules"
)

// ruleVerdicts is what the rules said of the selected pods: the judge
// step's output.
type ruleVerdicts struct {
	// Verdicts are what planning reads of them.
	planner.Verdicts
	// failures are the rules that failed, with one error each and how many
	// pods they failed for.
	failures map[string]failure
	// overBudget is set when the pass ran out of the evaluation budget; the
	// pods after that were not evaluated.
	overBudget *overEvaluationBudget
	// stopped is set when the sandbox stopped a rule so that the policy
	// halts; the pods after that were not evaluated.
	stopped *policy.Stop
	// evaluated is how many pods were evaluated; outcomes counts them by
	// what came of each ("match", "no_data", "no_match", "error") and
	// took is how long it took, the signals' queries aside.
	evaluated int
	outcomes  map[string]int
	took      time.Duration
}

type failure struct {
	pods int
	err  error
}

// judge evaluates the policy's rules over the pods in, within the
// evaluation budget; cancelled is true when the policy changed or was
// deleted meanwhile.
func (r *Reconciler) judge(ctx context.Context, p *v1alpha1.RecreatePolicy, program *policy.Program, in *planner.Input) (v ruleVerdicts, cancelled bool) {
	keep := make(map[types.UID]bool, len(in.Pods))
	for _, pod := range in.Pods {
		keep[pod.UID] = true
	}
	hist := r.state.history(types.NamespacedName{Namespace: p.Namespace, Name: p.Name}, keep)
	passCtx, done := r.state.startPass(ctx, p.UID, p.Generation)
	defer done()
	v = newJudge(passCtx, p, program, in, hist, r.Memory, r.Signals, r.evaluationBudget()).all(passCtx, in.Pods, nil)
	observeVerdicts(p, program, v)
	return v, passCtx.Err() != nil && ctx.Err() == nil
}

// observeVerdicts counts one pass's evaluations, by outcome, and the
// rules' errors. Each rule's error counter exists from its first pass, at
// 0, so that an increase over it counts the first errors too.
func observeVerdicts(p *v1alpha1.RecreatePolicy, program *policy.Program, v ruleVerdicts) {
	for _, rule := range program.Rules() {
		ruleErrors.WithLabelValues(p.Name, p.Namespace, rule)
	}
	for outcome, n := range v.outcomes {
		evaluations.WithLabelValues(p.Name, p.Namespace, outcome).Add(float64(n))
	}
	for rule, f := range v.failures {
		ruleErrors.WithLabelValues(p.Name, p.Namespace, rule).Add(float64(f.pods))
	}
	evaluationDuration.WithLabelValues(p.Name, p.Namespace).Observe(v.took.Seconds())
}

// judge is what one pass knows to evaluate the rules pod by pod: the
// signals' values, which rules read which signal, the requests and the
// containers' history.
type judge struct {
	program *policy.Program
	spec    *policyspec.Spec
	memory  MemoryHistory
	values  *signals.Values
	readers map[string][]string
	facts   *planner.Facts
	hist    *history
	now     time.Time
	// budget bounds the pass's evaluation, the signals' queries included;
	// none when 0.
	budget time.Duration
}

// newJudge is the judge of one pass of the policy over in, its signals
// queried once from sigs within budget (none when 0).
func newJudge(ctx context.Context, p *v1alpha1.RecreatePolicy, program *policy.Program, in *planner.Input, hist *history, memory MemoryHistory, sigs SignalSource, budget time.Duration) *judge {
	return &judge{program: program, spec: in.Spec, memory: memory, values: signalValues(ctx, p, sigs, budget, in.Now),
		readers: readersOf(p), facts: in.Facts, hist: hist, now: in.Now, budget: budget}
}

// all runs the program for every pod, within the budget, and sums up
// what the rules said; each, when set, is given every pod whose
// containers the patterns name, with its verdict.
func (j *judge) all(ctx context.Context, pods []*corev1.Pod, each func(*corev1.Pod, podVerdict)) ruleVerdicts {
	v := ruleVerdicts{failures: map[string]failure{}, outcomes: map[string]int{}}
	type noDataKey struct{ rule, signal string }
	noData := map[noDataKey]*v1alpha1.RuleNoData{}
	// The signals' queries were Prometheus' work for this policy: they
	// count in its budget (time lost to an unreachable Prometheus does not).
	start := time.Now()
	queries := j.values.QueryTime()
	for i, pod := range pods {
		if ctx.Err() != nil {
			break
		}
		v.evaluated = i + 1
		if took := time.Since(start) + queries; j.budget > 0 && took > j.budget {
			v.overBudget = &overEvaluationBudget{evaluated: i, took: took, queries: queries}
			break
		}
		pj, ok := j.pod(ctx, pod)
		if !ok {
			continue
		}
		if each != nil {
			each(pod, pj)
		}
		if pj.err != nil {
			v.outcomes["error"]++
			f := v.failures[""]
			v.failures[""] = failure{pods: f.pods + 1, err: pj.err}
			continue
		}
		for _, res := range pj.results {
			if res.Err != nil {
				f := v.failures[res.Rule]
				v.failures[res.Rule] = failure{pods: f.pods + 1, err: res.Err}
			}
		}
		for _, nd := range pj.noData {
			k := noDataKey{nd.Rule, nd.Signal}
			if noData[k] == nil {
				noData[k] = &v1alpha1.RuleNoData{Rule: nd.Rule, Signal: nd.Signal, Reason: nd.Reason}
			}
			noData[k].Pods++
		}
		if pj.candidate != nil {
			v.Candidates = append(v.Candidates, pj.candidate)
		}
		if pj.unrestartable != nil {
			v.Unrestartable = append(v.Unrestartable, pj.unrestartable)
		}
		switch {
		case pj.candidate != nil || pj.unrestartable != nil:
			v.outcomes["match"]++
		case len(pj.noData) > 0:
			v.outcomes["no_data"]++
		default:
			v.outcomes["no_match"]++
		}
		if s := j.program.Stopped(); s != nil {
			v.stopped = s
			break
		}
	}
	v.took = time.Since(start)
	for _, nd := range noData {
		v.NoData = append(v.NoData, *nd)
	}
	slices.SortFunc(v.NoData, func(a, b v1alpha1.RuleNoData) int {
		return strings.Compare(a.Rule+"\x00"+a.Signal, b.Rule+"\x00"+b.Signal)
	})
	if len(v.NoData) > v1alpha1.MaxNoData {
		v.NoData = v.NoData[:v1alpha1.MaxNoData]
	}
	v.Failures = v.failureText()
	if v.stopped != nil {
		v.Stopped = stoppedMessage(v.stopped)
	}
	if v.overBudget != nil {
		v.OverBudget = v.overBudget.message(len(pods), j.budget)
	}
	return v
}

// podVerdict is what the rules said of one pod.
type podVerdict struct {
	// containers are the containers evaluated: every one the patterns
	// name, so that a match the kubelet would not act on is said, not
	// dropped.
	containers []string
	// results are each rule's, the matches of a rule that lacks a signal
	// it names taken out.
	results []policy.RuleResult
	noData  []noDataNote
	// candidate gathers the matches of containers the kubelet would start
	// again; unrestartable those of containers it would not. Nil when
	// there are none.
	candidate, unrestartable *planner.PodCandidate
	// err is set when the pod's input could not be built.
	err error
}

// target is what the rules are given of the pod's containers: the
// pod, its signals, each container's history and past recreations.
func (j *judge) target(pod *corev1.Pod, containers []string, memory *memoryNotes) policy.Target {
	notReady := j.hist.observe(pod, j.now)
	target := policy.Target{Pod: pod, Signals: j.values.Pod(pod.Name)}
	for _, name := range containers {
		key := planner.ContainerKey{Pod: pod.UID, Container: name}
		target.Containers = append(target.Containers, policy.ContainerCandidate{
			Name: name, NotReadySince: notReady[name], Memory: memory.read(j.memory, pod, name),
			Signals:     j.values.Container(pod.Name, name),
			Recreations: j.facts.Recreations[key], LastRecreation: j.facts.LastRecreated[key],
		})
	}
	return target
}

// noDataNote is a rule that lacked a signal for the pod, and why when
// known.
type noDataNote struct{ Rule, Signal, Reason string }

// pod evaluates the rules for one pod; ok is false when the policy's
// patterns name none of its containers. Several rules matching one pod
// make one candidate: the containers of all, the trigger of the first,
// the reasons of all.
func (j *judge) pod(ctx context.Context, pod *corev1.Pod) (podVerdict, bool) {
	var out podVerdict
	out.containers = j.spec.Containers.Matching(pod)
	if len(out.containers) == 0 {
		return out, false
	}
	restartable := j.spec.Containers.Candidates(pod)
	var memory memoryNotes
	target := j.target(pod, out.containers, &memory)
	results, err := j.program.Evaluate(ctx, target, j.now)
	if err != nil {
		out.err = err
		return out, true
	}
	// What the kubelet would start again is a candidate; what it would
	// not is left alone, with a decision.
	var act, left match
	for i := range results {
		res := &results[i]
		if res.Err != nil {
			continue
		}
		// A rule never recreates a pod for want of a signal it names:
		// its matches give way to no data.
		for _, signal := range j.readers[res.Rule] {
			if why := j.values.Missing(pod.Name, signal); why != "" {
				res.Matches = nil
				out.noData = append(out.noData, noDataNote{Rule: res.Rule, Signal: "signals." + signal, Reason: v1alpha1.Truncate(why, v1alpha1.MaxReasonLength)})
			}
		}
		for _, nd := range res.NoData {
			out.noData = append(out.noData, noDataNote{Rule: res.Rule, Signal: nd.Signal, Reason: v1alpha1.Truncate(memory.reason(j.memory, nd), v1alpha1.MaxReasonLength)})
		}
		for _, m := range res.Matches {
			into := &act
			if !slices.Contains(restartable, m.Container) {
				into = &left
			}
			into.add(pod, res.Rule, m)
		}
	}
	out.results = results
	out.candidate, out.unrestartable = act.candidate(), left.candidate()
	return out, true
}

// match gathers the matches of several rules for one pod into one
// candidate: the containers of all, the trigger of the first, the reasons
// of all.
type match struct {
	c       *planner.PodCandidate
	reasons []string
}

func (g *match) add(pod *corev1.Pod, rule string, m policy.Match) {
	if g.c == nil {
		g.c = &planner.PodCandidate{Pod: pod, Trigger: planner.Trigger{Kind: planner.TriggerRule, Rule: rule}}
	}
	if !slices.Contains(g.c.Containers, m.Container) {
		g.c.Containers = append(g.c.Containers, m.Container)
	}
	g.c.Force = g.c.Force || m.Force
	reason := m.Reason
	if reason == "" {
		reason = "matched"
	}
	g.reasons = append(g.reasons, fmt.Sprintf("%s: %s: %s", rule, m.Container, reason))
}

// candidate is the gathered candidate with its reasons, cut to a
// reason's bound (they are the request's rejuv.dev/reason), nil when
// nothing matched.
func (g *match) candidate() *planner.PodCandidate {
	if g.c != nil {
		g.c.Reason = v1alpha1.Truncate(strings.Join(g.reasons, "; "), v1alpha1.MaxReasonLength)
	}
	return g.c
}

// failureText sums up the rules that failed.
func (v ruleVerdicts) failureText() string {
	var parts []string
	for rule, f := range v.failures {
		name := "rule " + rule
		if rule == "" {
			name = "the input"
		}
		parts = append(parts, fmt.Sprintf("%s failed for %d pods: %v", name, f.pods, f.err))
	}
	slices.Sort(parts)
	return strings.Join(parts, "; ")
}

// overEvaluationBudget is a pass that ran out of the evaluation budget: took
// counts the signals' queries (queries of it).
type overEvaluationBudget struct {
	evaluated int
	took      time.Duration
	queries   time.Duration
}

func (o *overEvaluationBudget) message(selected int, budget time.Duration) string {
	spent := ""
	if o.queries > 0 {
		spent = fmt.Sprintf(" (Prometheus %s of it, on the signals' queries)", o.queries.Round(time.Millisecond))
	}
	return fmt.Sprintf("evaluating the rules took %s%s for %d of the %d selected pods, over the budget of %s per pass (the manager's --policy-evaluation-budget): "+
		"the rules are not evaluated again until the policy's spec changes (make the rules or queries cheaper or select fewer pods)",
		o.took.Round(time.Millisecond), spent, o.evaluated, selected, budget)
}

// stoppedMessage says which rule the sandbox stopped and why.
func stoppedMessage(s *policy.Stop) string {
	rules := policy.RulesText(s.Rules)
	why := s.Err
	if ee, ok := errors.AsType[*policy.EvalError](s.Err); ok {
		rules += " for pod " + ee.Pod
		why = ee.Err
	}
	return fmt.Sprintf("the sandbox stopped %s: %v: the rules are not evaluated again until the policy's spec changes", rules, why)
}

const (
	signalMemory        = "memory"
	signalMemoryHistory = "memory.history"
)

// memoryNotes keeps, for one pod, what the history said of each container,
// to explain a rule's no data.
type memoryNotes struct {
	missing map[string]string
	windows map[string]*policy.MemoryWindow
}

// read is the container's window from h, noting why there is none.
func (n *memoryNotes) read(h MemoryHistory, pod *corev1.Pod, container string) *policy.MemoryWindow {
	if h == nil {
		return nil
	}
	w, why := h.Memory(pod, container)
	if n.windows == nil {
		n.missing, n.windows = map[string]string{}, map[string]*policy.MemoryWindow{}
	}
	if w == nil {
		n.missing[container] = why
	}
	n.windows[container] = w
	return w
}

// reason explains a rule's no data when it is the memory signal's.
func (n *memoryNotes) reason(h MemoryHistory, nd policy.NoData) string {
	switch {
	case nd.Signal != signalMemory && nd.Signal != signalMemoryHistory:
		return ""
	case h == nil:
		return "the manager samples no memory source (--memory-source=none)"
	case nd.Signal == signalMemory:
		if why := n.missing[nd.Container]; why != "" {
			return why
		}
		return ""
	}
	w := n.windows[nd.Container]
	if w == nil {
		return ""
	}
	return fmt.Sprintf("the window holds %d samples over %s; the manager keeps %s", w.Samples, durationText(w.WindowSeconds), h.Describe())
}

// durationText writes seconds as a Go duration without zero units:
// 1h, 20m, 1m30s.
func durationText(sec float64) string {
	s := (time.Duration(sec) * time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// noPrometheus is why signals have no values when the manager has no
// Prometheus.
const noPrometheus = "the manager has no Prometheus to query (--prometheus-url)"

// signalValues evaluates the policy's signals once for the pass, from
// source (nil when the manager has no Prometheus) within budget (none when
// 0); nil when it has none.
func signalValues(ctx context.Context, p *v1alpha1.RecreatePolicy, source SignalSource, budget time.Duration, now time.Time) *signals.Values {
	if len(p.Spec.Signals) == 0 {
		return nil
	}
	if source == nil {
		names := make([]string, len(p.Spec.Signals))
		for i, s := range p.Spec.Signals {
			names[i] = s.Name
		}
		return signals.Unavailable(names, noPrometheus)
	}
	if budget > 0 {
		// Prometheus may spend at most the pass's evaluation budget on
		// them.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, budget)
		defer cancel()
	}
	return source.Query(ctx, p.Namespace, p.Spec.Signals, now)
}

// readersOf maps each of the policy's inline rules to the signals it
// names (rules.Names remembers its answers, so a pass parses nothing).
func readersOf(p *v1alpha1.RecreatePolicy) map[string][]string {
	if len(p.Spec.Signals) == 0 {
		return nil
	}
	byRule := map[string][]string{}
	for _, rule := range p.Spec.Rules {
		if rule.Rego == "" {
			continue
		}
		for _, s := range p.Spec.Signals {
			if rules.Names(rule.Rego, s.Name) {
				byRule[rule.Name] = append(byRule[rule.Name], s.Name)
			}
		}
	}
	return byRule
}
