package executor

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/daemon/cri"
)

// RuntimeSource gives the runtime client once the daemon has found it.
type RuntimeSource interface {
	Client() *cri.Client
}

// Executor runs the ContainerRecreateRequests of one node.
type Executor struct {
	// Client reads from a cache that holds only this node's active
	// requests and pods.
	Client   client.Client
	Runtime  RuntimeSource
	NodeName string
	Clock    clock.PassiveClock
	// Recorder records events on the request and its pod.
	Recorder events.EventRecorder

	// stoppedAt remembers when each container was stopped, to time the
	// kubelet's restart; lost on a restart of the daemon, which only
	// loses that one sample.
	stoppedAt sync.Map
}

// +kubebuilder:rbac:groups=apps.kruise.io,resources=containerrecreaterequests,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps.kruise.io,resources=containerrecreaterequests/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers the executor: it reacts to its requests, to
// their pods' status, and to a sibling's completion (so that the next
// request on a pod starts at once).
func (e *Executor) SetupWithManager(mgr ctrl.Manager) error {
	if e.Clock == nil {
		e.Clock = clock.RealClock{}
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("crr-executor").
		For(&v1beta1.ContainerRecreateRequest{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(e.requestsOfPod)).
		Watches(&v1beta1.ContainerRecreateRequest{}, handler.EnqueueRequestsFromMapFunc(e.siblings)).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Complete(e)
}

func (e *Executor) requestsOfPod(ctx context.Context, o client.Object) []reconcile.Request {
	return e.activeRequests(ctx, o.GetNamespace(), string(o.GetUID()))
}

func (e *Executor) siblings(ctx context.Context, o client.Object) []reconcile.Request {
	return e.activeRequests(ctx, o.GetNamespace(), o.GetLabels()[v1beta1.PodUIDLabel])
}

func (e *Executor) activeRequests(ctx context.Context, namespace, podUID string) []reconcile.Request {
	if podUID == "" {
		return nil
	}
	list := &v1beta1.ContainerRecreateRequestList{}
	if err := e.Client.List(ctx, list, client.InNamespace(namespace), client.MatchingLabels{v1beta1.PodUIDLabel: podUID}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list ContainerRecreateRequests of a pod", "podUID", podUID)
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return out
}

// Reconcile implements reconcile.Reconciler.
func (e *Executor) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	crr := &v1beta1.ContainerRecreateRequest{}
	if err := e.Client.Get(ctx, req.NamespacedName, crr); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("get ContainerRecreateRequest %s: %w", req, err)
	}
	if crr.Status.Phase == v1beta1.PhaseCompleted || crr.DeletionTimestamp != nil || crr.Labels[v1beta1.NodeNameLabel] != e.NodeName {
		return ctrl.Result{}, nil
	}
	pod := &corev1.Pod{}
	err := e.Client.Get(ctx, types.NamespacedName{Namespace: crr.Namespace, Name: crr.Spec.PodName}, pod)
	if apierrors.IsNotFound(err) {
		return ctrl.Result{}, nil // the manager ends it
	}
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("get pod %s/%s: %w", crr.Namespace, crr.Spec.PodName, err)
	}
	// The label says which daemon should act; the pod says whether it may.
	if pod.Spec.NodeName != e.NodeName || string(pod.UID) != crr.Labels[v1beta1.PodUIDLabel] {
		return ctrl.Result{}, nil
	}
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("pod", pod.Name))

	siblings := &v1beta1.ContainerRecreateRequestList{}
	if err := e.Client.List(ctx, siblings, client.InNamespace(crr.Namespace), client.MatchingLabels{v1beta1.PodUIDLabel: string(pod.UID)}); err != nil {
		return ctrl.Result{}, fmt.Errorf("list ContainerRecreateRequests of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	if h := head(siblings.Items); h != nil && h.UID != crr.UID {
		return ctrl.Result{}, e.queue(ctx, crr, h.Name)
	}
	rt := e.Runtime.Client()
	if rt == nil {
		return ctrl.Result{RequeueAfter: time.Second}, e.writeStatus(ctx, crr, func(s *v1beta1.ContainerRecreateRequestStatus) {
			if s.Phase == "" {
				s.Phase = v1beta1.PhasePending
			}
			s.Message = "waiting for the daemon to find the node's container runtime"
		})
	}
	return e.run(ctx, crr, pod, rt)
}

// queue keeps a request Pending behind the one running on the same pod.
func (e *Executor) queue(ctx context.Context, crr *v1beta1.ContainerRecreateRequest, running string) error {
	return e.writeStatus(ctx, crr, func(s *v1beta1.ContainerRecreateRequestStatus) {
		s.Phase = v1beta1.PhasePending
		s.Message = fmt.Sprintf("queued behind ContainerRecreateRequest %s on the same pod", running)
	})
}

// writeStatus applies change to a copy of the status and writes it when it
// changed, with the request's resourceVersion (a conflict is retried).
func (e *Executor) writeStatus(ctx context.Context, crr *v1beta1.ContainerRecreateRequest, change func(*v1beta1.ContainerRecreateRequestStatus)) error {
	updated := crr.DeepCopy()
	change(&updated.Status)
	if equality.Semantic.DeepEqual(updated.Status, crr.Status) {
		return nil
	}
	if err := e.Client.Status().Update(ctx, updated); err != nil {
		return fmt.Errorf("update status of ContainerRecreateRequest %s/%s: %w", crr.Namespace, crr.Name, err)
	}
	*crr = *updated
	return nil
}
