package recreatepolicy

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// disruptionCheck tells whether the PodDisruptionBudgets covering a pod
// allow one more disruption. Recreating a container makes the pod unready
// for a while, which is a disruption as budgets count them.
func disruptionCheck(pdbs []policyv1.PodDisruptionBudget, pods []*corev1.Pod) func(types.UID) (bool, string) {
	byUID := make(map[types.UID]*corev1.Pod, len(pods))
	for _, pod := range pods {
		byUID[pod.UID] = pod
	}
	// Budgets whose selector does not parse, or selects nothing, cover no
	// pod.
	selectors := make([]labels.Selector, len(pdbs))
	for i := range pdbs {
		if sel, err := metav1.LabelSelectorAsSelector(pdbs[i].Spec.Selector); err == nil && !sel.Empty() {
			selectors[i] = sel
		}
	}
	// What this pass admitted already counts against each budget.
	used := map[string]int32{}
	return func(uid types.UID) (bool, string) {
		pod := byUID[uid]
		if pod == nil {
			return true, ""
		}
		var covering []*policyv1.PodDisruptionBudget
		for i := range pdbs {
			pdb := &pdbs[i]
			if selectors[i] == nil || !selectors[i].Matches(labels.Set(pod.Labels)) {
				continue
			}
			if allowed := pdb.Status.DisruptionsAllowed - used[pdb.Name]; allowed < 1 {
				return false, fmt.Sprintf("PodDisruptionBudget %s allows no disruption now (%d healthy, %d desired)", pdb.Name, pdb.Status.CurrentHealthy, pdb.Status.DesiredHealthy)
			}
			covering = append(covering, pdb)
		}
		for _, pdb := range covering {
			used[pdb.Name]++
		}
		return true, ""
	}
}
