package pause

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// Observer is the leader's controller of the emergency stop: it sets
// rejuv_paused and marks on the ConfigMap the data it acts on
// (v1alpha1.PauseObservedAnnotation), which `kubectl rejuv pause` waits
// for. The leader's other controllers read the stop from the same cache,
// so what this one has seen, they have.
type Observer struct {
	Client client.Client
	Switch *Switch
}

// The emergency stop's ConfigMap is annotated by name alone.
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=patch,resourceNames=rejuv-pause,namespace=system

// SetupWithManager registers the observer.
func (o *Observer) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("pause").
		For(&corev1.ConfigMap{}, builder.WithPredicates(o.Switch.Predicate())).
		Complete(o)
}

// Reconcile implements reconcile.Reconciler.
func (o *Observer) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cm := &corev1.ConfigMap{}
	if err := o.Client.Get(ctx, req.NamespacedName, cm); err != nil {
		if apierrors.IsNotFound(err) {
			if observed(false) {
				ctrl.LoggerFrom(ctx).Info("Rejuv resumed: the emergency stop's ConfigMap is gone")
			}
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("read the emergency stop, ConfigMap %s: %w", req.NamespacedName, err)
	}
	st := Of(cm)
	if !st.Paused {
		observed(false)
		return ctrl.Result{}, nil
	}
	if !observed(true) {
		ctrl.LoggerFrom(ctx).Info("Rejuv paused", "why", st.Message)
	}
	digest := v1alpha1.PauseDigest(cm.Data)
	if cm.Annotations[v1alpha1.PauseObservedAnnotation] == digest {
		return ctrl.Result{}, nil
	}
	patch := client.MergeFrom(cm.DeepCopy())
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[v1alpha1.PauseObservedAnnotation] = digest
	if err := o.Client.Patch(ctx, cm, patch); err != nil {
		return ctrl.Result{}, fmt.Errorf("mark the emergency stop %s observed: %w", req.NamespacedName, err)
	}
	return ctrl.Result{}, nil
}
