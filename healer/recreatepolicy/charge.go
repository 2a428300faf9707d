package recreatepolicy

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	apipods "github.com/rejuv-dev/rejuv/api/pods"
)

// A policy charges the PodDisruptionBudgets covering a pod before it asks
// for the pod's recreation, as the eviction API charges them before an
// eviction: in each budget's status, one disruption fewer allowed and the
// pod in disruptedPods, written under the resourceVersion it read. The
// disruption controller then counts the pod disrupted until the entry goes
// (for at most two minutes), and an eviction by someone else sees the
// budget spent: the two are ordered by the budget's resourceVersion, so
// neither can take the budget's last disruption beside the other. The
// policy takes its entries back once the request completes.
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets/status,verbs=update

// chargeTries bounds the retries of a charge whose write conflicts.
const chargeTries = 5

// disruptedTimeout is how long the disruption controller counts a pod of
// disruptedPods as disrupted.
const disruptedTimeout = 2 * time.Minute

// covering returns the names of the budgets whose selector selects pod.
func covering(pdbs []policyv1.PodDisruptionBudget, pod *corev1.Pod) []string {
	var names []string
	for i := range pdbs {
		if sel := pdbSelector(&pdbs[i]); sel != nil && sel.Matches(labels.Set(pod.Labels)) {
			names = append(names, pdbs[i].Name)
		}
	}
	return names
}

// charge spends one disruption of each named budget on pod, at the time
// at. A budget that allows none refuses: what was charged is taken back,
// and the refusal says why. A pod that is not Ready is not healthy by the
// budgets' count and is charged nothing.
func (r *Reconciler) charge(ctx context.Context, pod *corev1.Pod, budgets []string, at time.Time) (refused string, err error) {
	if !apipods.Ready(pod) {
		return "", nil
	}
	var charged []string
	for _, name := range budgets {
		why, err := r.chargeOne(ctx, pod, name, at)
		if err != nil || why != "" {
			r.release(ctx, pod, charged, at)
			return why, err
		}
		charged = append(charged, name)
	}
	return "", nil
}

func (r *Reconciler) chargeOne(ctx context.Context, pod *corev1.Pod, name string, at time.Time) (string, error) {
	for try := 1; ; try++ {
		pdb := &policyv1.PodDisruptionBudget{}
		if err := r.Reader.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: name}, pdb); err != nil {
			if apierrors.IsNotFound(err) {
				return "", nil
			}
			return "", fmt.Errorf("read PodDisruptionBudget %s/%s to charge it for pod %s: %w", pod.Namespace, name, pod.Name, err)
		}
		if _, ok := pdb.Status.DisruptedPods[pod.Name]; ok {
			// Charged already (a pass that created the request before).
			return "", nil
		}
		switch {
		case pdb.Status.ObservedGeneration < pdb.Generation:
			return fmt.Sprintf("PodDisruptionBudget %s has not been counted since it changed", name), nil
		case pdb.Status.DisruptionsAllowed <= 0:
			return fmt.Sprintf("PodDisruptionBudget %s allows no disruption now (%d healthy, %d desired)", name, pdb.Status.CurrentHealthy, pdb.Status.DesiredHealthy), nil
		}
		pdb.Status.DisruptionsAllowed--
		if pdb.Status.DisruptedPods == nil {
			pdb.Status.DisruptedPods = map[string]metav1.Time{}
		}
		pdb.Status.DisruptedPods[pod.Name] = metav1.NewTime(at)
		err := r.Client.Status().Update(ctx, pdb)
		if err == nil {
			return "", nil
		}
		if !apierrors.IsConflict(err) || try == chargeTries {
			return "", fmt.Errorf("charge PodDisruptionBudget %s/%s for pod %s: %w", pod.Namespace, name, pod.Name, err)
		}
	}
}

// release takes back the named budgets' entries for pod made at the time
// at; a budget changed meanwhile is left to the next pass, or to the
// disruption controller's timeout.
func (r *Reconciler) release(ctx context.Context, pod *corev1.Pod, budgets []string, at time.Time) {
	for _, name := range budgets {
		pdb := &policyv1.PodDisruptionBudget{}
		if err := r.Reader.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: name}, pdb); err != nil {
			continue
		}
		r.releaseEntry(ctx, pdb, pod.Name, at)
	}
}

// releaseEntry removes pod's entry from the budget's disruptedPods when it
// is the one charged at the time at (to the second, as the API keeps it),
// and keeps the budget as written.
func (r *Reconciler) releaseEntry(ctx context.Context, pdb *policyv1.PodDisruptionBudget, pod string, at time.Time) {
	entry, ok := pdb.Status.DisruptedPods[pod]
	if !ok || !entry.Time.Truncate(time.Second).Equal(at.Truncate(time.Second)) {
		return
	}
	updated := pdb.DeepCopy()
	delete(updated.Status.DisruptedPods, pod)
	if r.Client.Status().Update(ctx, updated) == nil {
		*pdb = *updated
	}
}

// releaseCompleted takes back the budgets' entries for the pods whose
// charged request has completed, so that the disruption controller counts
// them again as soon as they are healthy rather than two minutes on.
func (r *Reconciler) releaseCompleted(ctx context.Context, pdbs []policyv1.PodDisruptionBudget, completed map[string]time.Time) {
	for i := range pdbs {
		for pod := range pdbs[i].Status.DisruptedPods {
			if at, ok := completed[pod]; ok {
				r.releaseEntry(ctx, &pdbs[i], pod, at)
			}
		}
	}
}

// chargedAt reads when a request's budgets were charged.
func chargedAt(crr *appsv1beta1.ContainerRecreateRequest) (time.Time, bool) {
	v := crr.Annotations[appsv1beta1.DisruptionChargedAnnotation]
	if v == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, v)
	return t, err == nil
}
