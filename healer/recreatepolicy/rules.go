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
	noData     []v1alpha1.RuleNoData
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
	noData := map[noDataKey]int{}
	start := time.Now()
	budget := r.evaluationBudget()
	for i, pod := range pods {
		if took := time.Since(start); took > budget {
			v.budget = &overBudgetPass{evaluated: i, took: took}
			break
		}
		names := spec.Containers.Candidates(pod)
		if len(names) == 0 {
			continue
		}
		notReady := hist.observe(pod, now)
		target := policy.Target{Pod: pod}
		for _, name := range names {
			key := planner.ContainerKey{Pod: pod.UID, Container: name}
			target.Containers = append(target.Containers, policy.Candidate{
				Name: name, NotReadySince: notReady[name],
				Recreations: facts.recreations[key], LastRecreation: facts.lastRecreated[key],
			})
		}
		results, err := program.EvaluateAt(ctx, target, now)
		if err != nil {
			evaluations.WithLabelValues(p.Name, p.Namespace, "error").Inc()
			f := v.failures[""]
			v.failures[""] = failure{pods: f.pods + 1, err: err}
			continue
		}
		var c *planner.Candidate
		var reasons []string
		podNoData := false
		for _, res := range results {
			if res.Err != nil {
				f := v.failures[res.Rule]
				v.failures[res.Rule] = failure{pods: f.pods + 1, err: res.Err}
				continue
			}
			for _, nd := range res.NoData {
				noData[noDataKey{res.Rule, nd.Signal}]++
				podNoData = true
			}
			for _, m := range res.Matches {
				if c == nil {
					c = &planner.Candidate{Pod: pod, Trigger: planner.Trigger{Kind: planner.TriggerRule, Rule: res.Rule}}
				}
				if !slices.Contains(c.Containers, m.Container) {
					c.Containers = append(c.Containers, m.Container)
				}
				c.Force = c.Force || m.Force
				reason := m.Reason
				if reason == "" {
					reason = "matched"
				}
				reasons = append(reasons, fmt.Sprintf("%s: %s: %s", res.Rule, m.Container, reason))
			}
		}
		switch {
		case c != nil:
			c.Reason = strings.Join(reasons, "; ")
			v.candidates = append(v.candidates, c)
			evaluations.WithLabelValues(p.Name, p.Namespace, "match").Inc()
		case podNoData:
			evaluations.WithLabelValues(p.Name, p.Namespace, "no_data").Inc()
		default:
			evaluations.WithLabelValues(p.Name, p.Namespace, "no_match").Inc()
		}
	}
	evaluationDuration.WithLabelValues(p.Name, p.Namespace).Observe(time.Since(start).Seconds())
	for k, n := range noData {
		v.noData = append(v.noData, v1alpha1.RuleNoData{Rule: k.rule, Signal: k.signal, Pods: int32(n)})
	}
	slices.SortFunc(v.noData, func(a, b v1alpha1.RuleNoData) int {
		return strings.Compare(a.Rule+"\x00"+a.Signal, b.Rule+"\x00"+b.Signal)
	})
	if len(v.noData) > 32 {
		v.noData = v.noData[:32]
	}
	return v
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
