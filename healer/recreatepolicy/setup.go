package recreatepolicy

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// SetupWithManager registers the controller: policies (on spec changes),
// their requests, and the pods they select.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.Requests == "" {
		r.Requests = RequestsV1beta1
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("recreatepolicy").
		For(&v1alpha1.RecreatePolicy{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(r.Requests.object()).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.policiesOf)).
		Complete(r)
}

// policiesOf maps a pod to the policies of its namespace that select it.
func (r *Reconciler) policiesOf(ctx context.Context, o client.Object) []reconcile.Request {
	list := &v1alpha1.RecreatePolicyList{}
	if err := r.Client.List(ctx, list, client.InNamespace(o.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list the RecreatePolicies of a pod's namespace", "namespace", o.GetNamespace())
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		p := &list.Items[i]
		sel, err := metav1.LabelSelectorAsSelector(&p.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(o.GetLabels())) {
			continue
		}
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: p.Namespace, Name: p.Name}})
	}
	return out
}
