package recreatepolicy

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// setCondition sets the policy's condition kind, its message cut to the
// condition's bound (a rule's error may echo a value of any size).
func setCondition(p *v1alpha1.RecreatePolicy, kind string, ok bool, reason, msg string) {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&p.Status.Conditions, metav1.Condition{
		Type: kind, Status: status, Reason: reason, Message: v1alpha1.Truncate(msg, v1alpha1.MaxMessageLength), ObservedGeneration: p.Generation,
	})
}

func unhalt(p *v1alpha1.RecreatePolicy) {
	setCondition(p, v1alpha1.ConditionHalted, false, v1alpha1.ReasonNotHalted, "")
}

// haltedFor returns the Halted condition when the policy is halted for
// reason, else nil.
func haltedFor(p *v1alpha1.RecreatePolicy, reason string) *metav1.Condition {
	c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionHalted)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != reason {
		return nil
	}
	return c
}

// unhaltFor lifts a halt for reason, and no other.
func unhaltFor(p *v1alpha1.RecreatePolicy, reason string) {
	if haltedFor(p, reason) != nil {
		unhalt(p)
	}
}

// finish sets the counts and the conditions that sum up the policy;
// evalFailures sums up the rules that failed, "" for none.
func (pl *plan) finish(evalFailures string) {
	p, s := pl.p, pl.s
	p.Status.SelectedPods = int32(len(pl.in.pods))
	p.Status.ActiveRecreations = int32(pl.in.facts.own)
	if meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionHalted) == nil {
		unhalt(p)
	}
	if max := p.Spec.Limits.MaxPerHour; max != nil && s.CreatedLastHour >= int(*max) {
		setCondition(p, v1alpha1.ConditionBudgetExhausted, true, v1alpha1.ReasonRateLimited,
			fmt.Sprintf("%d recreations in the last hour, limits.maxPerHour is %d", s.CreatedLastHour, *max))
	} else {
		setCondition(p, v1alpha1.ConditionBudgetExhausted, false, v1alpha1.ReasonWithinBudget, "")
	}
	switch {
	case pl.in.paused != "":
		setCondition(p, v1alpha1.ConditionReady, false, v1alpha1.ReasonPaused, pl.in.paused)
	case p.Spec.Suspend:
		setCondition(p, v1alpha1.ConditionReady, false, v1alpha1.ReasonSuspended, "spec.suspend is true")
	case p.Spec.DryRun:
		setCondition(p, v1alpha1.ConditionReady, true, v1alpha1.ReasonDryRun, "decisions are recorded, no request is created")
	case evalFailures != "":
		setCondition(p, v1alpha1.ConditionReady, true, v1alpha1.ReasonEvaluationFailed, evalFailures)
	default:
		setCondition(p, v1alpha1.ConditionReady, true, v1alpha1.ReasonActive, "")
	}
}
