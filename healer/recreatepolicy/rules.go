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
	"github.com/rejuv-dev/rejuv/policy"
)

// verdicts is what the rules said of the selected pods.
type verdicts struct {
	candidates []*planner.Candidate
	// unrestartable are the pods the rules matched whose matched
	// containers the kubelet would not start again once stopped
	// (restartPolicy Never or OnFailure): left alone, with a decision.
	unrestartable []*planner.Candidate
	noData        []v1alpha1.RuleNoData
	// failures are the rules that failed, with one error each and how many
	// pods they failed for.
	failures map[string]failure
	// budget is set when the pass ran out of the evaluation budget; the
	// pods after that were not evaluated.
	budget *overBudgetPass
}

type failure struct {
	pods int
	err  error
}

// evaluate runs the program for every selected pod, within the evaluation
// budget. Several rules matching one pod make one candidate: the
// containers of all, the trigger of the first, the reasons of all.
func (r *Reconciler) evaluate(ctx context.Context, p *v1alpha1.RecreatePolicy, program *policy.Program, spec *policyspec.Spec, pods []*corev1.Pod, facts *requestFacts, hist *history, now time.Time) verdicts {
	v := verdicts{failures: map[string]failure{}}
	type noDataKey struct{ rule, signal string }
	noData := map[noDataKey]*v1alpha1.RuleNoData{}
	values := r.signalValues(ctx, p, now)
	readers := r.readersOf(p)
	// Each rule's error counter exists from its first pass, at 0, so that
	// an increase over it counts the first errors too.
	for _, rule := range program.Rules() {
		ruleErrors.WithLabelValues(p.Name, p.Namespace, rule)
	}
	start := time.Now()
	budget := r.evaluationBudget()
	for i, pod := range pods {
		if took := time.Since(start); took > budget {
			v.budget = &overBudgetPass{evaluated: i, took: took}
			break
		}
		// Every container the patterns name is evaluated, so that a
		// match the kubelet would not act on is said, not dropped.
		names := spec.Containers.Matching(pod)
		if len(names) == 0 {
			continue
		}
		restartable := spec.Containers.Candidates(pod)
		notReady := hist.observe(pod, now)
		target := policy.Target{Pod: pod, Signals: values.Pod(pod.Name)}
		var memory memoryNotes
		for _, name := range names {
			key := planner.ContainerKey{Pod: pod.UID, Container: name}
			target.Containers = append(target.Containers, policy.Candidate{
				Name: name, NotReadySince: notReady[name], Memory: memory.read(r.Memory, pod, name),
				Signals:     values.Container(pod.Name, name),
				Recreations: facts.recreations[key], LastRecreation: facts.lastRecreated[key],
			})
		}
		results, err := program.EvaluateAt(ctx, target, now)
		if err != nil {
			evaluations.WithLabelValues(p.Name, p.Namespace, "error").Inc()
			ruleErrors.WithLabelValues(p.Name, p.Namespace, "").Inc()
			f := v.failures[""]
			v.failures[""] = failure{pods: f.pods + 1, err: err}
			continue
		}
		// What the kubelet would start again is a candidate; what it
		// would not is left alone, with a decision.
		var act, left match
		podNoData := false
		for _, res := range results {
			if res.Err != nil {
				ruleErrors.WithLabelValues(p.Name, p.Namespace, res.Rule).Inc()
				f := v.failures[res.Rule]
				v.failures[res.Rule] = failure{pods: f.pods + 1, err: res.Err}
				continue
			}
			lacks := func(signal, reason string) {
				k := noDataKey{res.Rule, signal}
				if noData[k] == nil {
					noData[k] = &v1alpha1.RuleNoData{Rule: res.Rule, Signal: signal, Reason: truncate(reason)}
				}
				noData[k].Pods++
				podNoData = true
			}
			// A rule never recreates a pod for want of a signal it
			// names: its matches give way to no data.
			for _, signal := range readers[res.Rule] {
				if why := values.Missing(pod.Name, signal); why != "" {
					res.Matches = nil
					lacks("signals."+signal, why)
				}
			}
			for _, nd := range res.NoData {
				lacks(nd.Signal, memory.reason(r.Memory, nd))
			}
			for _, m := range res.Matches {
				into := &act
				if !slices.Contains(restartable, m.Container) {
					into = &left
				}
				into.add(pod, res.Rule, m)
			}
		}
		c := act.candidate()
		if c != nil {
			v.candidates = append(v.candidates, c)
		}
		if l := left.candidate(); l != nil {
			v.unrestartable = append(v.unrestartable, l)
		}
		switch {
		case c != nil || len(left.reasons) > 0:
			evaluations.WithLabelValues(p.Name, p.Namespace, "match").Inc()
		case podNoData:
			evaluations.WithLabelValues(p.Name, p.Namespace, "no_data").Inc()
		default:
			evaluations.WithLabelValues(p.Name, p.Namespace, "no_match").Inc()
		}
	}
	evaluationDuration.WithLabelValues(p.Name, p.Namespace).Observe(time.Since(start).Seconds())
	for _, nd := range noData {
		v.noData = append(v.noData, *nd)
	}
	slices.SortFunc(v.noData, func(a, b v1alpha1.RuleNoData) int {
		return strings.Compare(a.Rule+"\x00"+a.Signal, b.Rule+"\x00"+b.Signal)
	})
	if len(v.noData) > 32 {
		v.noData = v.noData[:32]
	}
	return v
}

// match gathers the matches of several rules for one pod into one
// candidate: the containers of all, the trigger of the first, the reasons
// of all.
type match struct {
	c       *planner.Candidate
	reasons []string
}

func (g *match) add(pod *corev1.Pod, rule string, m policy.Match) {
	if g.c == nil {
		g.c = &planner.Candidate{Pod: pod, Trigger: planner.Trigger{Kind: planner.TriggerRule, Rule: rule}}
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

// candidate is the gathered candidate with its reasons, nil when nothing
// matched.
func (g *match) candidate() *planner.Candidate {
	if g.c != nil {
		g.c.Reason = strings.Join(g.reasons, "; ")
	}
	return g.c
}

// failureText sums up the rules that failed.
func (v verdicts) failureText() string {
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
