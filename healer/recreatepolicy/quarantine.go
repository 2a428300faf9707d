package recreatepolicy

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/planner"
	"github.com/rejuv-dev/rejuv/policy"
)

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
