package recreatepolicy

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// passes are the passes over policies' rules in flight: a pass of a
// policy deleted or changed meanwhile is cancelled, so that its rules stop
// at their next step rather than at the end of the pass.
type passes struct {
	mu      sync.Mutex
	running map[types.UID]*pass
}

type pass struct {
	generation int64
	cancel     context.CancelFunc
}

// start returns the context of a pass over the policy's rules at
// generation, and the function that ends it.
func (ps *passes) start(ctx context.Context, uid types.UID, generation int64) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	p := &pass{generation: generation, cancel: cancel}
	ps.mu.Lock()
	if ps.running == nil {
		ps.running = map[types.UID]*pass{}
	}
	ps.running[uid] = p
	ps.mu.Unlock()
	return ctx, func() {
		cancel()
		ps.mu.Lock()
		if ps.running[uid] == p {
			delete(ps.running, uid)
		}
		ps.mu.Unlock()
	}
}

// outdated cancels the pass of the policy uid unless it is at generation
// (a deleted policy's is cancelled with generation 0).
func (ps *passes) outdated(uid types.UID, generation int64) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if p, ok := ps.running[uid]; ok && p.generation != generation {
		p.cancel()
	}
}

// policyChanges cancels the passes of policies changed or deleted.
func (r *Reconciler) policyChanges() handler.EventHandler {
	return handler.Funcs{
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			r.passes.outdated(e.ObjectNew.GetUID(), e.ObjectNew.GetGeneration())
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			r.passes.outdated(e.Object.GetUID(), 0)
		},
	}
}
