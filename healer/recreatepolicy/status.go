package recreatepolicy

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/planner"
)

func (r *Reconciler) setCondition(p *v1alpha1.RecreatePolicy, kind string, ok bool, reason, msg string) {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&p.Status.Conditions, metav1.Condition{
		Type: kind, Status: status, Reason: reason, Message: msg, ObservedGeneration: p.Generation,
	})
}

// halt sets Halted, with a Warning event when it was not set already.
func (r *Reconciler) halt(p *v1alpha1.RecreatePolicy, reason, msg string) {
	if !meta.IsStatusConditionTrue(p.Status.Conditions, v1alpha1.ConditionHalted) {
		r.Recorder.Eventf(p, nil, corev1.EventTypeWarning, "Halted", "Halt", "%s", msg)
	}
	r.setCondition(p, v1alpha1.ConditionHalted, true, reason, msg)
}

func (r *Reconciler) unhalt(p *v1alpha1.RecreatePolicy) {
	r.setCondition(p, v1alpha1.ConditionHalted, false, v1alpha1.ReasonNotHalted, "")
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
func (r *Reconciler) unhaltFor(p *v1alpha1.RecreatePolicy, reason string) {
	if haltedFor(p, reason) != nil {
		r.unhalt(p)
	}
}

// reportEvaluation makes rule failures visible: a Warning event and the
// Ready condition's message, while the policy keeps acting on the others.
func (r *Reconciler) reportEvaluation(p *v1alpha1.RecreatePolicy, v ruleVerdicts) {
	if len(v.failures) == 0 {
		return
	}
	msg := v.failureText()
	r.Recorder.Eventf(p, nil, corev1.EventTypeWarning, v1alpha1.ReasonEvaluationFailed, "Evaluate", "%s", msg)
}

// finishStatus sets the counts and the conditions that sum up the policy.
func (r *Reconciler) finishStatus(p *v1alpha1.RecreatePolicy, facts *requestFacts, s *planner.Situation, selected int, evalFailures string) {
	p.Status.SelectedPods = int32(selected)
	p.Status.ActiveRecreations = int32(facts.own)
	selectedPods.WithLabelValues(p.Name, p.Namespace).Set(float64(selected))
	activeRecreations.WithLabelValues(p.Name, p.Namespace).Set(float64(facts.own))
	observeLimits(p, s)
	if meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionHalted) == nil {
		r.unhalt(p)
	}
	if max := p.Spec.Limits.MaxPerHour; max != nil && s.CreatedLastHour >= int(*max) {
		r.setCondition(p, v1alpha1.ConditionBudgetExhausted, true, v1alpha1.ReasonRateLimited,
			fmt.Sprintf("%d recreations in the last hour, limits.maxPerHour is %d", s.CreatedLastHour, *max))
	} else {
		r.setCondition(p, v1alpha1.ConditionBudgetExhausted, false, v1alpha1.ReasonWithinBudget, "")
	}
	switch {
	case p.Spec.Suspend:
		r.setCondition(p, v1alpha1.ConditionReady, false, v1alpha1.ReasonSuspended, "spec.suspend is true")
	case p.Spec.DryRun:
		r.setCondition(p, v1alpha1.ConditionReady, true, v1alpha1.ReasonDryRun, "decisions are recorded, no request is created")
	case evalFailures != "":
		r.setCondition(p, v1alpha1.ConditionReady, true, v1alpha1.ReasonEvaluationFailed, evalFailures)
	default:
		r.setCondition(p, v1alpha1.ConditionReady, true, v1alpha1.ReasonActive, "")
	}
}
