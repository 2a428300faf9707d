package planner

import (
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rejuv-dev/rejuv/api/pods"
)

// DisruptionCheck tells whether the PodDisruptionBudgets covering a pod
// allow one more disruption. Recreating a container makes the pod unready
// for a while, which is a disruption as budgets count them. A budget's
// status lags: it counts a pod healthy until its container stops, so a
// pod whose request is in flight is charged here from the moment the
// request exists. namespacePods are all the pods of the policy's
// namespace, which a budget may cover beyond the policy's selection.
func DisruptionCheck(pdbs []policyv1.PodDisruptionBudget, namespacePods []corev1.Pod, inFlight map[types.UID]bool) *Disruptions {
	d := &Disruptions{pdbs: pdbs, byUID: make(map[types.UID]*corev1.Pod, len(namespacePods)),
		selectors: make([]labels.Selector, len(pdbs)), allowed: make([]int32, len(pdbs))}
	for i := range namespacePods {
		d.byUID[namespacePods[i].UID] = &namespacePods[i]
	}
	for i := range pdbs {
		sel := PDBSelector(&pdbs[i])
		if sel == nil {
			continue
		}
		d.selectors[i] = sel
		// What the budget allows by its own count, and by ours: the
		// covered pods Ready and not being recreated, over those it
		// wants healthy.
		var healthy int32
		for j := range namespacePods {
			pod := &namespacePods[j]
			if sel.Matches(labels.Set(pod.Labels)) && CountsHealthy(pod, inFlight[pod.UID]) {
				healthy++
			}
		}
		d.allowed[i] = BudgetAllows(&pdbs[i], healthy)
	}
	return d
}

// CountsHealthy says whether Rejuv's own count of a budget's pods counts
// pod healthy: Ready, not being deleted, and not being recreated.
func CountsHealthy(pod *corev1.Pod, recreating bool) bool {
	return pod.DeletionTimestamp == nil && pods.Ready(pod) && !recreating
}

// BudgetAllows is how many disruptions the budget allows: the lower of
// its status's and of healthy, Rejuv's own count of its pods, over those
// it wants healthy.
func BudgetAllows(pdb *policyv1.PodDisruptionBudget, healthy int32) int32 {
	return min(pdb.Status.DisruptionsAllowed, healthy-pdb.Status.DesiredHealthy)
}

// Disruptions is what the namespace's budgets allow, less what the pass
// has taken.
type Disruptions struct {
	pdbs      []policyv1.PodDisruptionBudget
	byUID     map[types.UID]*corev1.Pod
	selectors []labels.Selector
	allowed   []int32
}

// covering are the indexes of the budgets that cover the pod.
func (d *Disruptions) covering(pod *corev1.Pod) []int {
	var out []int
	for i := range d.pdbs {
		if d.selectors[i] != nil && d.selectors[i].Matches(labels.Set(pod.Labels)) {
			out = append(out, i)
		}
	}
	return out
}

// Allows implements planner.Disruption.
func (d *Disruptions) Allows(uid types.UID) (bool, string) {
	pod := d.byUID[uid]
	if pod == nil {
		return true, ""
	}
	for _, i := range d.covering(pod) {
		pdb := &d.pdbs[i]
		// A pod unready already is not counted healthy: as with an
		// eviction, it may go while the budget is met (or always,
		// with unhealthyPodEvictionPolicy AlwaysAllow), and spends
		// none of it.
		need := int32(1)
		if !pods.Ready(pod) {
			need = 0
			if p := pdb.Spec.UnhealthyPodEvictionPolicy; p != nil && *p == policyv1.AlwaysAllow {
				need = math.MinInt32
			}
		}
		if d.allowed[i] < need {
			return false, fmt.Sprintf("PodDisruptionBudget %s allows no disruption now (%d healthy, %d desired, counting the pods being recreated as disrupted)",
				pdb.Name, pdb.Status.CurrentHealthy, pdb.Status.DesiredHealthy)
		}
	}
	return true, ""
}

// Take implements planner.Disruption: a Ready pod admitted spends one
// disruption of each budget covering it.
func (d *Disruptions) Take(uid types.UID) {
	pod := d.byUID[uid]
	if pod == nil || !pods.Ready(pod) {
		return
	}
	for _, i := range d.covering(pod) {
		d.allowed[i]--
	}
}

// PDBSelector is the budget's selector as the eviction API reads it
// (policy/v1): an empty selector covers every pod of the namespace, a null
// one none; nil for one that does not parse, which covers no pod.
func PDBSelector(pdb *policyv1.PodDisruptionBudget) labels.Selector {
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil {
		return nil
	}
	return sel
}

// PDBCovers says whether the budget's selector selects pod.
func PDBCovers(pdb *policyv1.PodDisruptionBudget, pod *corev1.Pod) bool {
	sel := PDBSelector(pdb)
	return sel != nil && sel.Matches(labels.Set(pod.Labels))
}
