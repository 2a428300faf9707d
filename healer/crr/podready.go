package crr

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// PodReadinessReconciler gives pods that carry the KruisePodReady readiness
// gate their condition (True) when they have none yet, so that the gate
// holds a pod out of service only while a request asks for it.
type PodReadinessReconciler struct {
	Client client.Client
}

// SetupWithManager registers the reconciler for pods with the gate.
func (r *PodReadinessReconciler) SetupWithManager(mgr ctrl.Manager) error {
	gated := predicate.NewPredicateFuncs(func(o client.Object) bool {
		pod, ok := o.(*corev1.Pod)
		return ok && hasReadinessGate(pod) && readyCondition(pod) == nil
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("pod-readiness-gate").
		For(&corev1.Pod{}, builder.WithPredicates(gated)).
		Complete(r)
}

// Reconcile implements reconcile.Reconciler.
func (r *PodReadinessReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	pod := &corev1.Pod{}
	if err := r.Client.Get(ctx, req.NamespacedName, pod); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("get pod %s: %w", req, err)
	}
	if !hasReadinessGate(pod) || readyCondition(pod) != nil {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, setPodReady(ctx, r.Client, pod, corev1.ConditionTrue, reasonReleased, "")
}
