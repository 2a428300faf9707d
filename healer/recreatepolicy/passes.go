package recreatepolicy

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// A pass over a policy's rules in flight is cancelled when its policy is
// deleted or changed meanwhile, so that its rules stop at their next step
// rather than at the end of the pass.

// startPass returns the context of a pass over the policy's rules at
// generation, and the function that ends it.
func (s *state) startPass(ctx context.Context, uid types.UID, generation int64) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	p := &pass{generation: generation, cancel: cancel}
	s.mu.Lock()
	if s.passes == nil {
		s.passes = map[types.UID]*pass{}
	}
	s.passes[uid] = p
	s.mu.Unlock()
	return ctx, func() {
		cancel()
		s.mu.Lock()
		if s.passes[uid] == p {
			delete(s.passes, uid)
		}
		s.mu.Unlock()
	}
}

// outdated cancels the pass of the policy uid unless it is at generation
// (a deleted policy's is cancelled with generation 0).
func (s *state) outdated(uid types.UID, generation int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.passes[uid]; ok && p.generation != generation {
		p.cancel()
	}
}

// policyChanges cancels the passes of policies changed or deleted.
func (r *Reconciler) policyChanges() handler.EventHandler {
	return handler.Funcs{
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			r.state.outdated(e.ObjectNew.GetUID(), e.ObjectNew.GetGeneration())
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			r.state.outdated(e.Object.GetUID(), 0)
		},
	}
}
