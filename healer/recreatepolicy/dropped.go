package recreatepolicy

import (
	"context"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/rejuv-dev/rejuv/api/apps/v1alpha1"
	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/healer/planner"
)

// The budget charges of requests deleted before they completed (by hand,
// or by the garbage collector after their policy) are entries of the
// budgets' disruptedPods that no completion will take back: the state
// keeps them per namespace until its next pass takes them back. They are
// kept in memory: after a manager restart, the disruption controller's
// two-minute timeout takes such an entry back instead.

// requestDeleted records the charge of a deleted request that had not
// completed. o is a request in either version.
func (s *state) requestDeleted(o client.Object) {
	crr, ok := o.(*appsv1beta1.ContainerRecreateRequest)
	if old, isOld := o.(*appsv1alpha1.ContainerRecreateRequest); isOld {
		crr, ok = &appsv1beta1.ContainerRecreateRequest{}, old.ConvertTo(crr) == nil
	}
	if !ok || crr.Status.Phase == appsv1beta1.PhaseCompleted {
		return
	}
	at, charged := planner.ChargedAt(crr)
	if !charged {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.namespace(crr.Namespace).dropped[crr.Spec.PodName] = at
}

// takeDropped returns the namespace's dropped charges and forgets them.
func (s *state) takeDropped(namespace string) map[string]time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	ns := s.namespaces[namespace]
	if ns == nil || len(ns.dropped) == 0 {
		return nil
	}
	out := ns.dropped
	ns.dropped = map[string]time.Time{}
	s.tidy(namespace)
	return out
}

// releaseDropped takes back the namespace's dropped charges from its
// budgets as they are now; used when no pass of a policy reads them (its
// policy is gone).
func (r *Reconciler) releaseDropped(ctx context.Context, namespace string) {
	dropped := r.state.takeDropped(namespace)
	if len(dropped) == 0 {
		return
	}
	pdbs := &policyv1.PodDisruptionBudgetList{}
	if err := r.Reader.List(ctx, pdbs, client.InNamespace(namespace)); err != nil {
		return
	}
	r.releaseCompleted(ctx, pdbs.Items, dropped)
}
