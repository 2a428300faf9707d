package recreatepolicy

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/planner"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
	"github.com/rejuv-dev/rejuv/healer/signals"
	"github.com/rejuv-dev/rejuv/policy"
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
