package recreatepolicy

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/policy"
)

// TestARestartQuarantinesWhatRanPastItsBounds: the overruns a manager's
// last process left in the journal halt their policies when the next
// starts (condition and event, before any policy is reconciled), which then
// evaluates none of their rules, until the spec changes; an overrun of an
// earlier generation halts nothing; the journal is emptied.
func TestARestartQuarantinesWhatRanPastItsBounds(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	spec := func(app string) v1alpha1.RecreatePolicySpec {
		annotate(t, createPods(t, ns, app, 1, time.Now().Add(-time.Hour))[0])
		return v1alpha1.RecreatePolicySpec{
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
			Rules:    []v1alpha1.Rule{{Name: "matching", Rego: annotated}},
			Rollout:  v1alpha1.Rollout{MaxUnavailable: new(intstr.FromString("100%"))},
			Limits:   v1alpha1.Limits{MaxMatchingPercent: new(int32(100))},
		}
	}
	stuck := createPolicy(t, ns, "stuck", spec("web"))
	changed := createPolicy(t, ns, "changed", spec("other"))

	journal, err := policy.OpenJournal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []policy.Overrun{
		{Namespace: ns, Name: stuck.Name, UID: stuck.UID, Generation: stuck.Generation, Rules: []string{"matching"}, Pod: ns + "/web-0", Why: "it ran 12s past its deadline (250ms)"},
		{Namespace: ns, Name: changed.Name, UID: changed.UID, Generation: changed.Generation - 1, Rules: []string{"matching"}, Pod: ns + "/other-0", Why: "it ran 12s past its deadline (250ms)"},
	} {
		if err := journal.Record(o); err != nil {
			t.Fatal(err)
		}
	}

	c := newController(t, time.Second)
	c.Journal = journal
	q := &quarantine{r: c.Reconciler, done: make(chan struct{})}
	c.journaled = q.done
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := `the manager restarted while rule "matching" ran for pod ` + ns + `/web-0: it ran 12s past its deadline (250ms)`
	halted := meta.FindStatusCondition(getPolicy(t, stuck).Status.Conditions, v1alpha1.ConditionHalted)
	if halted == nil || halted.Status != metav1.ConditionTrue || halted.Reason != v1alpha1.ReasonEvaluationInterrupted || !strings.Contains(halted.Message, want) {
		t.Fatalf("Halted = %+v, want True, reason %s, naming the rule, the pod and why", halted, v1alpha1.ReasonEvaluationInterrupted)
	}
	if e, ok := warned(c, "Halted", want); !ok {
		t.Errorf("no Warning event Halted naming the overrun; events: %s", e)
	}
	if left, err := journal.Left(); err != nil || len(left) != 0 {
		t.Errorf("journal after the start: %v %v, want it emptied", left, err)
	}

	c.reconcile(t, stuck)
	c.reconcile(t, changed)
	after := getPolicy(t, stuck)
	if !meta.IsStatusConditionTrue(after.Status.Conditions, v1alpha1.ConditionHalted) || after.Status.LastEvaluationTime != nil || len(requestsOf(t, stuck)) != 0 {
		t.Errorf("the quarantined policy: Halted %+v, evaluated at %v, %d requests; want it halted, not evaluated, no request",
			meta.FindStatusCondition(after.Status.Conditions, v1alpha1.ConditionHalted), after.Status.LastEvaluationTime, len(requestsOf(t, stuck)))
	}
	if meta.IsStatusConditionTrue(getPolicy(t, changed).Status.Conditions, v1alpha1.ConditionHalted) || len(requestsOf(t, changed)) != 1 {
		t.Errorf("the policy whose generation changed since its overrun: halted or not acting (%d requests)", len(requestsOf(t, changed)))
	}

	// A new spec is evaluated again.
	after.Spec.EvaluationInterval = &metav1.Duration{Duration: time.Minute}
	if err := admin.Update(context.Background(), after); err != nil {
		t.Fatal(err)
	}
	c.reconcile(t, after)
	if p := getPolicy(t, stuck); meta.IsStatusConditionTrue(p.Status.Conditions, v1alpha1.ConditionHalted) || len(requestsOf(t, stuck)) != 1 {
		t.Errorf("after a spec change: Halted %+v, %d requests; want it evaluated again", meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionHalted), len(requestsOf(t, stuck)))
	}
}
