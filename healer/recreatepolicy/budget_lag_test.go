package recreatepolicy

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/rejuv-dev/rejuv/api/apps"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/planner"
)

// TestABudgetIsCountedFromTheAPIServerBeforeItIsCharged: the soak's hour
// (seed 14, +1841.6 s): a node was lost 53 s before a scheduled run's
// decision; the node controller had just made its two pods of a budget
// (minAvailable 3 of 4) not Ready, while the budget's status (the
// disruption controller's pass) still allowed one disruption and the
// manager's cache, its watch backing off after an API server restart,
// still showed all four Ready. The run took a third pod: one healthy
// besides it. The pods are now counted as the API server has them before
// the budget is charged; a pod is held back when they do not allow it,
// and admitted when they do.
func TestABudgetIsCountedFromTheAPIServerBeforeItIsCharged(t *testing.T) {
	scheme, err := apps.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	pod := func(name string, ready corev1.ConditionStatus) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID("uid-" + name), Labels: map[string]string{"app": "web"}},
			Status:     corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}}},
		}
	}
	budget := policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Generation: 1},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: new(intstr.FromInt32(3)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
		// As the disruption controller last wrote it, all four Ready.
		Status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: 1, CurrentHealthy: 4, DesiredHealthy: 3, ExpectedPods: 4},
	}
	for _, tc := range []struct {
		name       string
		lostReady  corev1.ConditionStatus
		want       v1alpha1.DecisionOutcome
		wantReason string
	}{
		{"the lost node's pods not Ready", corev1.ConditionFalse, v1alpha1.OutcomeDisruptionBudget, "2 of its pods are healthy as the API server has them, 3 desired"},
		{"every pod Ready", corev1.ConditionTrue, v1alpha1.OutcomeCreated, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			live := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
				pod("web-a", corev1.ConditionTrue), pod("web-b", corev1.ConditionTrue),
				pod("web-c", tc.lostReady), pod("web-d", tc.lostReady)).Build()
			r := &Reconciler{Reader: live}
			// The candidate as the manager's cache shows it: Ready.
			e := &planner.Planned{Candidate: &planner.PodCandidate{Pod: pod("web-b", corev1.ConditionTrue)}, Gated: true, Decision: v1alpha1.Decision{Pod: "web-b", Outcome: v1alpha1.OutcomeCreated}}
			if err := r.confirmBudgets(context.Background(), []policyv1.PodDisruptionBudget{budget}, []*planner.Planned{e}, map[types.UID]bool{}); err != nil {
				t.Fatal(err)
			}
			if e.Decision.Outcome != tc.want || !strings.Contains(e.Decision.Message, tc.wantReason) {
				t.Errorf("decision %s: %q; want %s, saying %q", e.Decision.Outcome, e.Decision.Message, tc.want, tc.wantReason)
			}
		})
	}
}
