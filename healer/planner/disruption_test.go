package planner

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
		ok, why := DisruptionCheck([]policyv1.PodDisruptionBudget{tc.pdb}, pods, nil).Allows(tc.target)
		if ok != tc.allowed {
			t.Errorf("%s: allowed %v (%s), want %v", tc.name, ok, why, tc.allowed)
		}
	}
}

// TestBudgetSelectorsAsTheEvictionAPIReadsThem: in policy/v1 an empty
// selector covers every pod of the namespace and a null one none, as the
// eviction API and the disruption controller read them.
func TestBudgetSelectorsAsTheEvictionAPIReadsThem(t *testing.T) {
	ready := func(name string, labels map[string]string) corev1.Pod {
		return corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name), Labels: labels},
			Status:     corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
		}
	}
	pods := []corev1.Pod{ready("web", map[string]string{"app": "web"}), ready("bare", nil)}
	// Both pods are healthy and the budget wants both: any pod it covers
	// may not go.
	budget := func(sel *metav1.LabelSelector) policyv1.PodDisruptionBudget {
		return policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: "all"},
			Spec:       policyv1.PodDisruptionBudgetSpec{Selector: sel},
			Status:     policyv1.PodDisruptionBudgetStatus{CurrentHealthy: 2, DesiredHealthy: 2},
		}
	}
	cases := []struct {
		name     string
		selector *metav1.LabelSelector
		target   types.UID
		allowed  bool
	}{
		{"empty selector, labelled pod", &metav1.LabelSelector{}, "web", false},
		{"empty selector, pod without labels", &metav1.LabelSelector{}, "bare", false},
		{"null selector", nil, "web", true},
		{"matchLabels, pod it selects", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, "web", false},
		{"matchLabels, pod it does not select", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, "bare", true},
	}
	for _, tc := range cases {
		pdbs := []policyv1.PodDisruptionBudget{budget(tc.selector)}
		ok, why := DisruptionCheck(pdbs, pods, nil).Allows(tc.target)
		if ok != tc.allowed {
			t.Errorf("%s: disruption allowed %v (%s), want %v", tc.name, ok, why, tc.allowed)
		}
		pod := &pods[0]
		if tc.target == "bare" {
			pod = &pods[1]
		}
		if got := PDBCovers(&pdbs[0], pod); got == tc.allowed {
			t.Errorf("%s: budget charged for the pod %v, want %v", tc.name, got, !tc.allowed)
		}
	}
}

// TestDisruptionAllowsWithoutTaking: asking whether a budget allows a pod
// to go spends nothing; only taking the disruption does, once per Ready
// pod admitted.
func TestDisruptionAllowsWithoutTaking(t *testing.T) {
	ready := func(name string) corev1.Pod {
		return corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name), Labels: map[string]string{"app": "web"}},
			Status:     corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
		}
	}
	pods := []corev1.Pod{ready("a"), ready("b"), ready("c")}
	pdb := policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
		Status:     policyv1.PodDisruptionBudgetStatus{CurrentHealthy: 3, DesiredHealthy: 2, DisruptionsAllowed: 1},
	}
	d := DisruptionCheck([]policyv1.PodDisruptionBudget{pdb}, pods, nil)
	for range 3 {
		if ok, why := d.Allows("a"); !ok {
			t.Fatalf("asking again spent the budget: %s", why)
		}
	}
	d.Take("a")
	if ok, _ := d.Allows("b"); ok {
		t.Error("after taking a's disruption, b may go too; the budget allows one")
	}
}
