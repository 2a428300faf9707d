package plugin

import (
	"bytes"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// TestExplainText: a pod with a request in flight, selected by one policy
// with a decision about it and not by another, whose requirement it
// fails is named.
func TestExplainText(t *testing.T) {
	pod := fixturePod()
	policies := fixturePolicies()
	e := &explanation{Pod: pod.Name, Namespace: pod.Namespace, Node: pod.Spec.NodeName, Phase: string(pod.Status.Phase), now: now}
	reqs := fixtureRequests()
	e.Requests = append(e.Requests, requestStatusOf(&reqs[0]))
	stuck := policies[1]
	ps := policyStatusOf(&stuck, func(d *v1alpha1.Decision) bool { return d.Pod == pod.Name })
	next := now.Add(time.Hour)
	e.Policies = []policyExplained{
		{Name: "api", WhyNot: unmet(labels.SelectorFromSet(labels.Set{"app": "api"}), pod.Labels)},
		{Name: "nightly", Selects: true, Ready: "True", Containers: containersOf(&policies[0], pod), Schedule: "50 2 * * * (UTC)", NextRun: &next,
			RunNow: &podResult{Pod: pod.Name, Outcome: "Unavailable", Reason: "scheduled run of 2026-11-24T03:00:00Z", Message: "1 of 3 selected pods unavailable, rollout.maxUnavailable allows 1"}},
		{Name: "stuck", Selects: true, Ready: ps.Ready, Halted: ps.Halted, Decisions: ps.Decisions, Containers: containersOf(&stuck, pod),
			Rules: []string{"stuck-readiness (stuck-readiness)", "leak (memory-leak)"},
			Now:   &podResult{Pod: pod.Name, Outcome: outcomeNoData, NoData: []noDataResult{{Rule: "leak", Signal: "memory", Reason: noMemoryHere}}}},
	}
	var b bytes.Buffer
	if err := e.render(&b); err != nil {
		t.Fatal(err)
	}
	golden(t, "explain.txt", b.Bytes())
}
