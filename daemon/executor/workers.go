package executor

import (
	"context"
	"fmt"
	"sync"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// Sources are the informers whose changes the executor follows.
type Sources struct {
	Pods, Requests cache.SharedIndexInformer
}

// Run reconciles the node's requests with workers until ctx ends, a pod
// at a time: a pod's requests when one of them changes (so that the next
// one starts as soon as the previous one completes), when the pod changes,
// and when a pass asked to look again. The informers must be running.
func (e *Executor) Run(ctx context.Context, src Sources, workers int) error {
	if e.Clock == nil {
		e.Clock = clock.RealClock{}
	}
	log := logr.FromContextOrDiscard(ctx).WithValues("controller", "crr-executor")
	// Keyed by pod: one pass over a pod at a time (see pod_queue.go).
	q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[podKey](),
		workqueue.TypedRateLimitingQueueConfig[podKey]{Name: "crr-executor", MetricsProvider: queueMetrics{}})
	defer q.ShutDown()
	onRequest := func(obj any) {
		crr, ok := requestOf(obj)
		if !ok {
			return
		}
		if key, ok := podOf(crr); ok {
			q.Add(key)
		}
	}
	onDelete := func(obj any) {
		if crr, ok := requestOf(obj); ok {
			e.forget(crr.UID)
		}
		onRequest(obj)
	}
	onPod := func(obj any) {
		// A pod without requests has nothing to pass over.
		if pod, ok := obj.(*corev1.Pod); ok && len(e.Store.RequestsOfPod(pod.Namespace, string(pod.UID))) > 0 {
			q.Add(podKey{Namespace: pod.Namespace, UID: pod.UID})
		}
	}
	regs := []struct {
		inf     cache.SharedIndexInformer
		handler cache.ResourceEventHandlerFuncs
	}{
		{src.Requests, cache.ResourceEventHandlerFuncs{AddFunc: onRequest, UpdateFunc: func(_, obj any) { onRequest(obj) }, DeleteFunc: onDelete}},
		{src.Pods, cache.ResourceEventHandlerFuncs{AddFunc: onPod, UpdateFunc: func(_, obj any) { onPod(obj) }}},
	}
	for _, r := range regs {
		h, err := r.inf.AddEventHandler(r.handler)
		if err != nil {
			return fmt.Errorf("follow the daemon's caches: %w", err)
		}
		defer func() { _ = r.inf.RemoveEventHandler(h) }()
	}
	e.requeue = func(key podKey, failed bool) {
		if failed {
			q.AddRateLimited(key)
			return
		}
		q.Add(key)
	}
	log.Info("starting workers", "workers", workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for e.next(ctx, log, q) {
			}
		})
	}
	<-ctx.Done()
	q.ShutDown()
	wg.Wait()
	// The stops still running end with ctx.
	e.background.Wait()
	return nil
}

// next reconciles one pod's requests from q; false once q is shut down.
func (e *Executor) next(ctx context.Context, log logr.Logger, q workqueue.TypedRateLimitingInterface[podKey]) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	defer q.Done(key)
	rlog := log.WithValues("namespace", key.Namespace, "podUID", key.UID)
	res, err := e.reconcilePod(logr.NewContext(ctx, rlog), key)
	switch {
	case err != nil:
		switch {
		case ctx.Err() != nil:
		case apierrors.IsConflict(err):
			// Another writer (the manager, or this daemon's previous
			// pass not yet in the cache) changed the request: routine.
			rlog.Info("the request changed since this pass read it; retrying", "error", err.Error())
		default:
			rlog.Error(err, "reconcile failed; retrying")
		}
		q.AddRateLimited(key)
	case res.RequeueAfter > 0:
		q.Forget(key)
		q.AddAfter(key, res.RequeueAfter)
	default:
		q.Forget(key)
	}
	return true
}

// requestOf is the request an informer's event is about.
func requestOf(obj any) (*v1beta1.ContainerRecreateRequest, bool) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	crr, ok := obj.(*v1beta1.ContainerRecreateRequest)
	return crr, ok
}
