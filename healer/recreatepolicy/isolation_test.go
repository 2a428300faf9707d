package recreatepolicy

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/policy"
	"github.com/rejuv-dev/rejuv/policy/policytest"
)

// TestSlowPolicyHaltsAtTheEvaluationBudget: a policy whose rules take
// longer over its pods than the per-pass budget stops being evaluated
// part way, halts with a condition that says so, creates nothing, and is
// not evaluated again until its spec changes.
func TestSlowPolicyHaltsAtTheEvaluationBudget(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 100*time.Millisecond)
	c.EvaluationBudget = 250 * time.Millisecond
	pods := createPods(t, ns, "web", 8, c.clock.Now().Add(-time.Hour))
	spec := rulePolicy("web", policytest.Endless)
	spec.Limits.MaxMatchingPercent = new(int32(100))
	p := createPolicy(t, ns, "slow", spec)
	start := time.Now()
	c.reconcile(t, p)
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the pass took %s; the budget is 250ms and each pod's evaluation stops at 100ms", took)
	}
	halted := meta.FindStatusCondition(getPolicy(t, p).Status.Conditions, v1alpha1.ConditionHalted)
	if halted == nil || halted.Status != metav1.ConditionTrue || halted.Reason != v1alpha1.ReasonEvaluationBudget ||
		!strings.Contains(halted.Message, "of the 8 selected pods, over the budget of 250ms per pass") {
		t.Fatalf("Halted = %+v, want True for EvaluationBudget", halted)
	}
	if n := len(requestsOf(t, p)); n != 0 {
		t.Errorf("%d requests from a halted policy", n)
	}
	// Each evaluation stops at 100ms, so two or three fit in the budget;
	// on a loaded machine one can overrun it alone (it stops when the
	// engine next looks at its deadline), and the pass stops after it.
	evaluated := testutil.ToFloat64(evaluations.WithLabelValues(p.Name, ns, "no_match"))
	if evaluated < 1 || evaluated >= 8 {
		t.Errorf("%v pods evaluated, want the pass stopped part way", evaluated)
	}
	// Same generation: not evaluated again.
	c.clock.Step(time.Minute)
	c.reconcile(t, p)
	if again := testutil.ToFloat64(evaluations.WithLabelValues(p.Name, ns, "no_match")); again != evaluated {
		t.Errorf("%v evaluations after the halt, want none", again-evaluated)
	}
	// A cheaper rule: evaluated, unhalted, acting.
	fixed := getPolicy(t, p)
	fixed.Spec.Rules[0].Rego = annotated
	if err := admin.Update(context.Background(), fixed); err != nil {
		t.Fatal(err)
	}
	annotate(t, pods[0])
	c.reconcile(t, p)
	if meta.IsStatusConditionTrue(getPolicy(t, p).Status.Conditions, v1alpha1.ConditionHalted) {
		t.Errorf("still halted after the rules changed: %+v", getPolicy(t, p).Status.Conditions)
	}
	if n := len(requestsOf(t, p)); n != 1 {
		t.Errorf("%d requests once the rules are cheap, want 1", n)
	}
}

// TestSlowPolicyDoesNotHoldOthersBack runs the controller as the manager
// does: while one policy's rules take seconds per pod, another policy of
// the same namespace is reconciled, and acts, before the slow one's first
// pass ends.
func TestSlowPolicyDoesNotHoldOthersBack(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	startManager(t, &Reconciler{Recorder: events.NewFakeRecorder(1000), Workers: 4,
		Engine: policy.NewEngine(policy.Options{Deadline: 3 * time.Second})})

	now := time.Now()
	createPods(t, ns, "slow", 2, now.Add(-time.Hour))
	pods := createPods(t, ns, "web", 1, now.Add(-time.Hour))
	slowSpec := rulePolicy("slow", policytest.Endless)
	slowSpec.Limits.MaxMatchingPercent = new(int32(100))
	slow := createPolicy(t, ns, "slow", slowSpec)
	time.Sleep(time.Second) // its first pass is under way: 2 pods of 3 s
	spec := rulePolicy("web", annotated)
	spec.Limits.MaxMatchingPercent = new(int32(100))
	fast := createPolicy(t, ns, "fast", spec)
	annotate(t, pods[0])
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if len(requestsOf(t, fast)) == 1 {
			break
		}
		if getPolicy(t, slow).Status.ObservedGeneration != 0 {
			t.Fatal("the slow policy's first pass ended before the other policy acted: the other waited for it")
		}
		if time.Now().After(deadline) {
			t.Fatal("the other policy created no request within 30 s")
		}
	}
	if getPolicy(t, slow).Status.ObservedGeneration != 0 {
		t.Fatal("the slow policy's first pass ended before the other policy acted (the premise: it is still evaluating)")
	}
}
