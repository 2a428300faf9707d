package recreatepolicy

import (
	"context"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apipods "github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/healer/planner"
)

// A policy charges the PodDisruptionBudgets covering a pod before it asks
// for the pod's recreation, as the eviction API charges them before an
// eviction: in each budget's status, one disruption fewer allowed and the
// pod in disruptedPods, written under the resourceVersion it read (one
// write per budget for all the pods a pass admits under it). The
// disruption controller then counts the pod disrupted until the entry goes
// (for at most two minutes), and an eviction by someone else sees the
// budget spent: the two are ordered by the budget's resourceVersion, so
// neither can take the budget's last disruption beside the other. The
// policy takes its entries back once the request completes.
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets/status,verbs=update

// chargeTries bounds the retries of a charge whose write conflicts.
const chargeTries = 5

// chargeAll charges the budgets for the pods at the time at, one write
// of each budget's status for all the pods it covers, from the budgets as
// the pass read them (read again only when a write conflicts); budgets
// are updated to what was written. It returns why each pod refused is
// refused: one a budget has no disruption left for, and whose charges by
// other budgets are then taken back. A pod that is not Ready is not
// healthy by the budgets' count and is charged nothing.
func (r *Reconciler) chargeAll(ctx context.Context, budgets []policyv1.PodDisruptionBudget, pods []*corev1.Pod, at time.Time) (refused map[string]string, err error) {
	refused = map[string]string{}
	charged := make([]map[string]time.Time, len(budgets))
	for i := range budgets {
		sel := planner.PDBSelector(&budgets[i])
		if sel == nil {
			continue
		}
		var covered []string
		for _, pod := range pods {
			if _, out := refused[pod.Name]; !out && apipods.Ready(pod) && sel.Matches(labels.Set(pod.Labels)) {
				covered = append(covered, pod.Name)
			}
		}
		if len(covered) == 0 {
			continue
		}
		if charged[i], err = r.chargeBudget(ctx, &budgets[i], covered, at, refused); err != nil {
			break
		}
	}
	// Charges of pods refused by another budget, or of a pass that failed.
	for i := range budgets {
		back := map[string]time.Time{}
		for pod := range charged[i] {
			if _, out := refused[pod]; out || err != nil {
				back[pod] = at
			}
		}
		r.releaseEntries(ctx, &budgets[i], back)
	}
	return refused, err
}

// coveredByAny says whether one of the budgets covers pod.
func coveredByAny(budgets []policyv1.PodDisruptionBudget, pod *corev1.Pod) bool {
	for i := range budgets {
		if planner.PDBCovers(&budgets[i], pod) {
			return true
		}
	}
	return false
}

// chargeBudget spends one disruption of the budget on each pod named, in
// one write of its status, and returns the pods charged; those it has no
// disruption left for are added to refused, with the reason.
func (r *Reconciler) chargeBudget(ctx context.Context, pdb *policyv1.PodDisruptionBudget, pods []string, at time.Time, refused map[string]string) (map[string]time.Time, error) {
	for try := 1; ; try++ {
		updated := pdb.DeepCopy()
		charged, why := map[string]time.Time{}, map[string]string{}
		for _, pod := range pods {
			switch _, ok := updated.Status.DisruptedPods[pod]; {
			case ok:
				// Charged already (a pass that created the request before).
			case updated.Status.ObservedGeneration < updated.Generation:
				why[pod] = fmt.Sprintf("PodDisruptionBudget %s has not been counted since it changed", pdb.Name)
			case updated.Status.DisruptionsAllowed <= 0:
				why[pod] = fmt.Sprintf("PodDisruptionBudget %s allows no disruption now (%d healthy, %d desired)", pdb.Name, pdb.Status.CurrentHealthy, pdb.Status.DesiredHealthy)
			default:
				updated.Status.DisruptionsAllowed--
				if updated.Status.DisruptedPods == nil {
					updated.Status.DisruptedPods = map[string]metav1.Time{}
				}
				updated.Status.DisruptedPods[pod] = metav1.NewTime(at)
				charged[pod] = at
			}
		}
		err := error(nil)
		if len(charged) > 0 {
			err = r.Client.Status().Update(ctx, updated)
		}
		if err == nil {
			*pdb = *updated
			maps.Copy(refused, why)
			return charged, nil
		}
		if !apierrors.IsConflict(err) || try == chargeTries {
			return nil, fmt.Errorf("charge PodDisruptionBudget %s/%s for %d pods: %w", pdb.Namespace, pdb.Name, len(charged), err)
		}
		// Written by someone else meanwhile (an eviction): read it again.
		if err := r.Reader.Get(ctx, client.ObjectKeyFromObject(pdb), pdb); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, nil
			}
			return nil, fmt.Errorf("read PodDisruptionBudget %s/%s to charge it: %w", pdb.Namespace, pdb.Name, err)
		}
	}
}

// releaseEntries removes from the budget's disruptedPods each pod's entry
// that is the one charged at the time given (to the second, as the API
// keeps it), in one write, and keeps the budget as written. A budget
// changed meanwhile is left to the next pass, or to the disruption
// controller's timeout.
func (r *Reconciler) releaseEntries(ctx context.Context, pdb *policyv1.PodDisruptionBudget, entries map[string]time.Time) {
	var updated *policyv1.PodDisruptionBudget
	for pod, at := range entries {
		entry, ok := pdb.Status.DisruptedPods[pod]
		if !ok || !entry.Time.Truncate(time.Second).Equal(at.Truncate(time.Second)) {
			continue
		}
		if updated == nil {
			updated = pdb.DeepCopy()
		}
		delete(updated.Status.DisruptedPods, pod)
	}
	if updated != nil && r.Client.Status().Update(ctx, updated) == nil {
		*pdb = *updated
	}
}

// releaseCompleted takes back the budgets' entries for the pods whose
// charged request has completed (or was not created), one write per
// budget, so that the disruption controller counts them again as soon as
// they are healthy rather than two minutes on.
func (r *Reconciler) releaseCompleted(ctx context.Context, pdbs []policyv1.PodDisruptionBudget, completed map[string]time.Time) {
	for i := range pdbs {
		r.releaseEntries(ctx, &pdbs[i], completed)
	}
}
