package crr

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
)

// PodReadinessReconciler keeps the KruisePodReady condition of pods that
// carry the readiness gate: True when they have none yet, and True again
// when a request took the pod out of service and no request that may hold
// it is left (one deleted in flight, by hand or with its policy, or while
// the manager was down). A pod is never left out of service by a request
// that is gone. It runs on every replica of the manager.
//
// No tenant's pods may delay another's: a held pod is looked at when it
// becomes held and when one of its requests is deleted or completes, not
// at every change of its status (a flapping probe); its requests are read
// from the cache, and from the API server only before the pod is put back
// in service; and readinessWorkers pods are handled at once.
type PodReadinessReconciler struct {
	Client client.Client
	// Reader reads requests from the API server, so that a request just
	// created, which the cache may not hold yet, keeps its pod held.
	Reader client.Reader
}

// readinessWorkers is how many pods the controller handles at once. A
// new gated pod costs one patch; a held pod, a read of the cache and, once
// no cached request holds it, one LIST.
const readinessWorkers = 4

// SetupWithManager registers the reconciler for pods with the gate, and
// for the pods of deleted requests.
func (r *PodReadinessReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Reader == nil {
		r.Reader = r.Client
	}
	gated := predicate.Funcs{
		CreateFunc: func(e event.CreateEvent) bool { return needsLook(e.Object) },
		// A held pod that stays held changes nothing this controller
		// decides: its requests' events do.
		UpdateFunc: func(e event.UpdateEvent) bool {
			pod, ok := e.ObjectNew.(*corev1.Pod)
			if !ok || !needsLook(pod) {
				return false
			}
			old, ok := e.ObjectOld.(*corev1.Pod)
			return !ok || !heldOut(old) || !heldOut(pod)
		},
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(e event.GenericEvent) bool { return needsLook(e.Object) },
	}
	podOf := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		crr, ok := o.(*v1beta1.ContainerRecreateRequest)
		if !ok {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: crr.Namespace, Name: crr.Spec.PodName}}}
	})
	ended := predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			old, ok1 := e.ObjectOld.(*v1beta1.ContainerRecreateRequest)
			crr, ok2 := e.ObjectNew.(*v1beta1.ContainerRecreateRequest)
			return ok1 && ok2 && old.Status.Phase != v1beta1.PhaseCompleted && crr.Status.Phase == v1beta1.PhaseCompleted
		},
		DeleteFunc:  func(event.DeleteEvent) bool { return true },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("pod-readiness-gate").
		// Every replica, not only the leader: a new pod with the gate
		// must become Ready while no replica leads. Its writes are
		// safe side by side (releasePod's optimistic lock).
		WithOptions(controller.Options{NeedLeaderElection: new(false), MaxConcurrentReconciles: readinessWorkers}).
		For(&corev1.Pod{}, builder.WithPredicates(gated)).
		Watches(&v1beta1.ContainerRecreateRequest{}, podOf, builder.WithPredicates(ended)).
		Complete(r)
}

// needsLook reports whether the pod has the gate and either no condition
// yet or one a request set.
func needsLook(o client.Object) bool {
	pod, ok := o.(*corev1.Pod)
	return ok && pods.HasReadinessGate(pod) && (pods.Condition(pod, PodReadyCondition) == nil || heldOut(pod))
}

// heldOut reports whether a request took the pod out of service.
func heldOut(pod *corev1.Pod) bool {
	c := pods.Condition(pod, PodReadyCondition)
	return c != nil && c.Status == corev1.ConditionFalse && c.Reason == reasonRecreating
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
	switch {
	case !pods.HasReadinessGate(pod):
		return ctrl.Result{}, nil
	case pods.Condition(pod, PodReadyCondition) == nil:
		return released(releasePod(ctx, r.Client, pod))
	case !heldOut(pod):
		return ctrl.Result{}, nil
	}
	held, err := r.mayHold(ctx, pod)
	if err != nil || held {
		return ctrl.Result{}, err
	}
	ctrl.LoggerFrom(ctx).Info("putting the pod back in service: no request holds it any more", "pod", req)
	return released(releasePod(ctx, r.Client, pod))
}

// released turns a release that lost to another write of the pod (another
// replica's, the kubelet's) into a prompt look at the pod as it now is,
// not an error.
func released(err error) (ctrl.Result, error) {
	if apierrors.IsConflict(err) {
		return ctrl.Result{RequeueAfter: 100 * time.Millisecond}, nil
	}
	return ctrl.Result{}, err
}

// mayHold reports whether a request of the pod that has not completed may
// hold it out of service: one with an unready grace, whether or not it has
// taken the pod out yet (it records that after the pod's condition). The
// cache answers when it holds such a request; only a pod it would put back
// in service is checked with the API server, whose answer alone releases
// it (the cache may not hold a request just created yet).
func (r *PodReadinessReconciler) mayHold(ctx context.Context, pod *corev1.Pod) (bool, error) {
	held, err := holdingRequest(ctx, r.Client, pod)
	if err != nil || held {
		return held, err
	}
	return holdingRequest(ctx, r.Reader, pod)
}

// holdingRequest reports whether reader holds a request that may hold
// the pod (see mayHold).
func holdingRequest(ctx context.Context, reader client.Reader, pod *corev1.Pod) (bool, error) {
	list := &v1beta1.ContainerRecreateRequestList{}
	if err := reader.List(ctx, list, client.InNamespace(pod.Namespace), client.MatchingLabels{v1beta1.PodUIDLabel: string(pod.UID)}); err != nil {
		return false, fmt.Errorf("list the ContainerRecreateRequests of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	for i := range list.Items {
		if list.Items[i].MayHoldUnready() {
			return true, nil
		}
	}
	return false, nil
}
