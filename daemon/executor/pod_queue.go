package executor

import (
	"context"
	"errors"
	"sort"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// The executor's work queue is keyed by pod, as OpenKruise's daemon keys
// its own: a request's changes, its pod's and a stop's end all queue its
// pod, the work queue never hands one key to two workers at once, and a
// pass over a pod runs only its head, the oldest open request. So one
// request per pod at a time follows from the queue's key; head() only
// says which.

// podKey names a pod's queue of requests, by the pod's UID (a pod of the
// same name created again is another queue).
type podKey struct {
	Namespace string
	UID       types.UID
}

// podOf is the key of the pod a request is for, by its pod UID label (set
// by the webhook); false without it: a daemon runs only a request that
// names its pod's UID.
func podOf(crr *v1beta1.ContainerRecreateRequest) (podKey, bool) {
	uid := crr.Labels[v1beta1.PodUIDLabel]
	return podKey{Namespace: crr.Namespace, UID: types.UID(uid)}, uid != ""
}

// queuedMessage is the message of a request waiting for an earlier one of
// its pod. It does not name the one running: a status that named the head
// would be written again for every request queued behind it each time the
// head changes, n²/2 writes for n requests.
const queuedMessage = "queued behind an earlier ContainerRecreateRequest of the same pod (one runs at a time, oldest first)"

// head returns the request that may run on a pod: the oldest one not yet
// completed (by creation time, then name, so that requests created in the
// same second keep a stable order).
func head(reqs []*v1beta1.ContainerRecreateRequest) *v1beta1.ContainerRecreateRequest {
	var waiting []*v1beta1.ContainerRecreateRequest
	for _, r := range reqs {
		if r.Open() {
			waiting = append(waiting, r)
		}
	}
	if len(waiting) == 0 {
		return nil
	}
	sort.Slice(waiting, func(i, j int) bool {
		a, b := waiting[i], waiting[j]
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return a.Name < b.Name
	})
	return waiting[0]
}

// Reconcile advances the pod of the request named: its oldest open
// request as far as it can go now, the others queued behind it (see
// reconcilePod).
func (e *Executor) Reconcile(ctx context.Context, req types.NamespacedName) (Result, error) {
	crr, ok := e.Store.Request(req.Namespace, req.Name)
	if !ok {
		return Result{}, nil
	}
	key, ok := podOf(crr)
	if !ok {
		return Result{}, nil
	}
	return e.reconcilePod(ctx, key)
}

// reconcilePod is one pass over a pod's requests of this node: what this
// daemon remembers of those that ended is forgotten, its head runs as far
// as it can go now, and the others wait behind it, Pending.
func (e *Executor) reconcilePod(ctx context.Context, key podKey) (Result, error) {
	var ours []*v1beta1.ContainerRecreateRequest
	for _, r := range e.Store.RequestsOfPod(key.Namespace, string(key.UID)) {
		if !r.Open() || r.Labels[v1beta1.NodeNameLabel] != e.NodeName {
			e.forget(r.UID)
			continue
		}
		ours = append(ours, r)
	}
	h := head(ours)
	if h == nil {
		return Result{}, nil
	}
	// The cache's objects are shared; statuses are written to copies.
	crr := h.DeepCopy()
	pod, ok := e.Store.Pod(crr.Namespace, crr.Spec.PodName)
	if !ok {
		return Result{}, nil // the manager ends its requests
	}
	// The label says which daemon should act; the pod says whether it may.
	if pod.Spec.NodeName != e.NodeName || pod.UID != key.UID {
		return Result{}, nil
	}
	ctx = logr.NewContext(ctx, logr.FromContextOrDiscard(ctx).WithValues("pod", pod.Name))
	if pod.DeletionTimestamp != nil {
		// The kubelet is stopping the pod, preStop hooks first: nothing
		// of it is touched, and the manager ends its requests.
		logr.FromContextOrDiscard(ctx).Info("the pod is being deleted; leaving its containers to the kubelet")
		return Result{}, nil
	}
	var errs []error
	for _, r := range ours {
		if r != h {
			errs = append(errs, e.queue(ctx, r.DeepCopy()))
		}
	}
	res, err := e.runHead(ctx, crr, pod)
	return res, errors.Join(append(errs, err)...)
}

// runHead advances crr, the head of the requests of pod, which is not
// being deleted.
func (e *Executor) runHead(ctx context.Context, crr *v1beta1.ContainerRecreateRequest, pod *corev1.Pod) (Result, error) {
	ctx = logr.NewContext(ctx, logr.FromContextOrDiscard(ctx).WithValues("ContainerRecreateRequest", crr.Namespace+"/"+crr.Name))
	rt := e.Runtime.Client()
	if rt == nil {
		return Result{RequeueAfter: time.Second}, e.writeStatus(ctx, crr, func(s *v1beta1.ContainerRecreateRequestStatus) {
			if s.Phase == "" {
				s.Phase = v1beta1.PhasePending
			}
			s.Message = "waiting for the daemon to find the node's container runtime"
		})
	}
	return e.newPass(crr, pod, rt).run(ctx)
}

// queue keeps a request Pending behind the one running on the same pod.
func (e *Executor) queue(ctx context.Context, crr *v1beta1.ContainerRecreateRequest) error {
	return e.writeStatus(ctx, crr, func(s *v1beta1.ContainerRecreateRequestStatus) {
		s.Phase = v1beta1.PhasePending
		s.Message = queuedMessage
	})
}
