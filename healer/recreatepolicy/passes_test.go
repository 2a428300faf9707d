package recreatepolicy

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// slowRule takes tens of milliseconds a pod, within its deadline.
const slowRule = `package slow
import rego.v1
recreate contains c.name if {
	some c in input.containers
	count([x | some x in numbers.range(1, 100000); x % 7 == 0]) < 0
}
`

// TestAChangedOrDeletedPolicyStopsItsPass: a pass over a policy's rules
// stops within a step once the policy changes or is deleted, rather than
// at the end of the pass, and writes nothing for the generation it
// evaluated.
func TestAChangedOrDeletedPolicyStopsItsPass(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	createPods(t, ns, "web", 40, time.Now().Add(-time.Hour))
	spec := v1alpha1.RecreatePolicySpec{
		Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Rules:    []v1alpha1.Rule{{Name: "slow", Rego: slowRule}},
		Rollout:  v1alpha1.Rollout{MaxUnavailable: new(intstr.FromString("100%"))},
	}
	c := newController(t, 5*time.Second)
	c.EvaluationBudget = time.Minute
	handler := c.policyChanges()

	// The premise: a whole pass takes seconds.
	full := createPolicy(t, ns, "full", spec)
	start := time.Now()
	c.reconcile(t, full)
	whole := time.Since(start)
	if whole < 2*time.Second || getPolicy(t, full).Status.LastEvaluationTime == nil {
		t.Fatalf("premise: a whole pass took %s (want seconds) and evaluated %v", whole, getPolicy(t, full).Status.LastEvaluationTime)
	}

	for _, change := range []string{"changed", "deleted"} {
		p := createPolicy(t, ns, change, spec)
		done := make(chan time.Time)
		go func() {
			_, err := c.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: p.Name}})
			if err != nil {
				t.Errorf("%s: reconcile: %v", change, err)
			}
			done <- time.Now()
		}()
		// Once its pass runs.
		for {
			c.state.mu.Lock()
			_, running := c.state.passes[p.UID]
			c.state.mu.Unlock()
			if running {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(300 * time.Millisecond)
		at := time.Now()
		newer := getPolicy(t, p)
		if change == "changed" {
			newer.Spec.EvaluationInterval = &metav1.Duration{Duration: time.Minute}
			if err := admin.Update(context.Background(), newer); err != nil {
				t.Fatal(err)
			}
			handler.Update(context.Background(), event.UpdateEvent{ObjectOld: p, ObjectNew: newer}, nil)
		} else {
			if err := admin.Delete(context.Background(), newer); err != nil {
				t.Fatal(err)
			}
			handler.Delete(context.Background(), event.DeleteEvent{Object: newer}, nil)
		}
		ended := <-done
		t.Logf("%s: the pass ended %s after the policy was %s; a whole pass took %s", change, ended.Sub(at).Round(time.Millisecond), change, whole.Round(time.Millisecond))
		if took := ended.Sub(at); took > whole/4 {
			t.Errorf("%s: the pass ended %s after the policy was %s, want within a step (a whole pass is %s)", change, took, change, whole)
		}
		if change == "changed" && getPolicy(t, p).Status.LastEvaluationTime != nil {
			t.Errorf("changed: the cancelled pass wrote its evaluation")
		}
	}
}
