package recreatepolicy

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/initiallist"
	"github.com/rejuv-dev/rejuv/healer/planner"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
	"github.com/rejuv-dev/rejuv/policy"
)

// SetupWithManager registers the controller: policies (on spec changes),
// their requests, the pods they select and the PodDisruptionBudgets of
// their namespaces, reconciled by Workers workers
// (a policy is never reconciled by two at once).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.Requests == "" {
		r.Requests = RequestsV1beta1
	}
	if r.Journal != nil {
		r.journaled = make(chan struct{})
		if err := mgr.Add(&quarantine{r: r, done: r.journaled}); err != nil {
			return err
		}
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Named("recreatepolicy").
		WithOptions(controller.Options{MaxConcurrentReconciles: max(r.Workers, 1)}).
		For(&v1alpha1.RecreatePolicy{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&v1alpha1.RecreatePolicy{}, r.policyChanges()).
		// Every policy is enqueued at the controller's start: the
		// requests, pods and budgets the informers held then are not
		// mapped to their policies one by one (at a takeover, every pod
		// of the cluster).
		Watches(r.Requests.Object(), r.requestEvents(mgr), builder.WithPredicates(initiallist.Skipped)).
		Watches(&corev1.Pod{}, r.podEvents(), builder.WithPredicates(initiallist.Skipped)).
		Watches(&policyv1.PodDisruptionBudget{}, handler.EnqueueRequestsFromMapFunc(r.policiesRespecting), builder.WithPredicates(initiallist.Skipped))
	if r.Pause != nil {
		// Paused or resumed, every policy says so at once.
		b = b.Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.everyPolicy), builder.WithPredicates(r.Pause.Predicate()))
	}
	return b.Complete(r)
}

// everyPolicy maps the emergency stop to every policy of the cluster.
func (r *Reconciler) everyPolicy(ctx context.Context, _ client.Object) []reconcile.Request {
	list := &v1alpha1.RecreatePolicyList{}
	if err := r.Client.List(ctx, list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list every RecreatePolicy to say Rejuv is paused or resumed")
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: list.Items[i].Namespace, Name: list.Items[i].Name}})
	}
	return out
}

// policiesRespecting maps a PodDisruptionBudget to the policies of its
// namespace that respect budgets: a budget that allows a disruption again
// (its controller counted a pod healthy, dropped an entry) may let a pod
// they hold back through.
func (r *Reconciler) policiesRespecting(ctx context.Context, o client.Object) []reconcile.Request {
	list := &v1alpha1.RecreatePolicyList{}
	if err := r.Client.List(ctx, list, client.InNamespace(o.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list the RecreatePolicies of a PodDisruptionBudget's namespace", "namespace", o.GetNamespace())
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if p := &list.Items[i]; planner.RespectsDisruptionBudgets(p) {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: p.Namespace, Name: p.Name}})
		}
	}
	return out
}

// requestEvents enqueues the policy that owns a request; a request
// deleted before it completed leaves its budget charge to take back.
func (r *Reconciler) requestEvents(mgr ctrl.Manager) handler.EventHandler {
	owner := handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &v1alpha1.RecreatePolicy{}, handler.OnlyControllerOwner())
	return handler.Funcs{
		CreateFunc:  owner.Create,
		UpdateFunc:  owner.Update,
		GenericFunc: owner.Generic,
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			r.state.requestDeleted(e.Object)
			owner.Delete(ctx, e, q)
		},
	}
}

// podEvents enqueues the policies that select a pod; a deleted pod's
// converted document also leaves the engine's cache.
func (r *Reconciler) podEvents() handler.EventHandler {
	enqueue := handler.EnqueueRequestsFromMapFunc(r.policiesOf)
	return handler.Funcs{
		CreateFunc:  enqueue.Create,
		UpdateFunc:  enqueue.Update,
		GenericFunc: enqueue.Generic,
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			r.Engine.Pods().Forget(e.Object.GetUID())
			enqueue.Delete(ctx, e, q)
		},
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

// policiesOf maps a pod to the policies of its namespace that select it.
func (r *Reconciler) policiesOf(ctx context.Context, o client.Object) []reconcile.Request {
	list := &v1alpha1.RecreatePolicyList{}
	// Only their selectors are read: the cache's own policies, not
	// copies of their status (a run's baseline names every pod's
	// containers) for each event of a pod or request.
	if err := r.Client.List(ctx, list, client.InNamespace(o.GetNamespace()), client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list the RecreatePolicies of a pod's namespace", "namespace", o.GetNamespace())
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		p := &list.Items[i]
		if !policyspec.Selects(p, o.GetLabels()) {
			continue
		}
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: p.Namespace, Name: p.Name}})
	}
	return out
}

// quarantine halts, once when the manager starts and before any policy is
// reconciled, the policies whose rules the journal says ran past their
// bounds in a step the sandbox could not stop: that step killed the last
// process (out of memory), or the liveness probe restarted it to stop the
// step. Evaluating them again would do the same, in every replica in turn.
// Every replica runs it, leader or not: the journal is its own.
type quarantine struct {
	r    *Reconciler
	done chan struct{}
}

func (q *quarantine) NeedLeaderElection() bool { return false }

func (q *quarantine) Start(ctx context.Context) error {
	defer close(q.done)
	log := ctrl.LoggerFrom(ctx).WithName("quarantine")
	left, err := q.r.Journal.Left()
	if err != nil {
		log.Error(err, "some overruns of the evaluation journal could not be read")
	}
	for _, o := range left {
		if err := q.r.quarantineOverrun(ctx, o); err != nil {
			// Kept for the next start.
			log.Error(err, "quarantine a policy whose rules ran past their bounds", "policy", o.Namespace+"/"+o.Name)
			continue
		}
		log.Info("policy quarantined: its rules ran past their bounds when the manager's last process ended",
			"policy", o.Namespace+"/"+o.Name, "rules", o.Rules, "pod", o.Pod, "why", o.Why)
		if err := q.r.Journal.Forget(o.UID); err != nil {
			log.Error(err, "forget an overrun dealt with")
		}
	}
	return nil
}

// keepInterruption sets the Halted condition of a policy the journal
// quarantined, on the copy the reconciler writes its status from: the
// cache may not show the quarantine's own write yet.
func (r *Reconciler) keepInterruption(p *v1alpha1.RecreatePolicy) {
	i, ok := r.state.interruption(p.UID)
	if ok && i.generation == p.Generation && planner.HaltedFor(p, v1alpha1.ReasonEvaluationInterrupted) == nil {
		planner.SetCondition(p, v1alpha1.ConditionHalted, true, v1alpha1.ReasonEvaluationInterrupted, i.message)
	}
}

// quarantineOverrun halts the overrun's policy, if it is still the policy
// and generation that ran past its bounds. This process does not evaluate
// it again in any case.
func (r *Reconciler) quarantineOverrun(ctx context.Context, o policy.Overrun) error {
	msg := interruptedMessage(o)
	r.state.interrupt(o.UID, interruption{generation: o.Generation, message: msg})
	var halted *v1alpha1.RecreatePolicy
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p := &v1alpha1.RecreatePolicy{}
		if err := r.Reader.Get(ctx, types.NamespacedName{Namespace: o.Namespace, Name: o.Name}, p); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		}
		if p.UID != o.UID || p.Generation != o.Generation || planner.Quarantined(p) {
			return nil
		}
		planner.SetCondition(p, v1alpha1.ConditionHalted, true, v1alpha1.ReasonEvaluationInterrupted, msg)
		if err := r.Client.Status().Update(ctx, p); err != nil {
			return err
		}
		halted = p
		return nil
	})
	if err != nil {
		return fmt.Errorf("halt RecreatePolicy %s/%s: %w", o.Namespace, o.Name, err)
	}
	if halted != nil {
		r.eventf(halted, nil, corev1.EventTypeWarning, "Halted", "Halt", "%s", msg)
		observeHalted(halted)
	}
	return nil
}

func interruptedMessage(o policy.Overrun) string {
	return fmt.Sprintf("the manager restarted while %s ran for pod %s: %s, in one step the sandbox cannot stop (a built-in runs to its end): "+
		"the rules are not evaluated again until the policy's spec changes", o.RulesText(), o.Pod, o.Why)
}
