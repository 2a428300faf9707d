package recreatepolicy

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestDisruptionOfAnUnreadyPod: a pod unready already may be recreated
// while the budget is met, as the eviction API lets it go (or always, with
// unhealthyPodEvictionPolicy AlwaysAllow), whatever disruptionsAllowed says.
func TestDisruptionOfAnUnreadyPod(t *testing.T) {
	pod := func(name string, ready bool) corev1.Pod {
		status := corev1.ConditionFalse
		if ready {
			status = corev1.ConditionTrue
		}
		return corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name), Labels: map[string]string{"app": "web"}},
			Status:     corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}},
		}
	}
	budget := func(desired int32, policy *policyv1.UnhealthyPodEvictionPolicyType) policyv1.PodDisruptionBudget {
		return policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, UnhealthyPodEvictionPolicy: policy},
			Status:     policyv1.PodDisruptionBudgetStatus{DesiredHealthy: desired},
		}
	}
	always := policyv1.AlwaysAllow
	pods := []corev1.Pod{pod("a", true), pod("b", true), pod("sick", false)}
	cases := []struct {
		name    string
		pdb     policyv1.PodDisruptionBudget
		target  types.UID
		allowed bool
	}{
		{"budget met, unready pod", budget(2, nil), "sick", true},
		{"budget met, ready pod", budget(2, nil), "a", false},
		{"budget short, unready pod", budget(3, nil), "sick", false},
		{"budget short, AlwaysAllow", budget(3, &always), "sick", true},
	}
	for _, tc := range cases {
		ok, why := disruptionCheck([]policyv1.PodDisruptionBudget{tc.pdb}, pods, nil)(tc.target)
		if ok != tc.allowed {
			t.Errorf("%s: allowed %v (%s), want %v", tc.name, ok, why, tc.allowed)
		}
	}
}
