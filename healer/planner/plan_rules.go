package planner

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// Judged plans what the rules said: the halts for what they cost or for
// matching too many pods, else the gates' decision on each candidate and
// the unrestartable left alone.
func (pl *Plan) Judged(v *Verdicts) {
	p, sec := pl.Policy, &pl.Rules
	pl.Verdicts = v
	p.Status.LastEvaluationTime = &metav1.Time{Time: pl.In.Now}
	p.Status.NoData = v.NoData
	if v.Failures != "" {
		sec.Events = append(sec.Events, PolicyEvent{corev1.EventTypeWarning, v1alpha1.ReasonEvaluationFailed, "Evaluate", v.Failures})
	}
	switch {
	case v.Stopped != "":
		pl.halt(sec, v1alpha1.ReasonRuleStopped, v.Stopped)
		return
	case v.OverBudget != "":
		pl.halt(sec, v1alpha1.ReasonEvaluationBudget, v.OverBudget)
		return
	}
	for _, reason := range RuleHalts {
		UnhaltFor(p, reason)
	}
	pl.Situation.Matching = len(v.Candidates)
	if pl.Situation.Halted() {
		pl.halt(sec, v1alpha1.ReasonBlastRadius, pl.Situation.HaltMessage())
	} else {
		UnhaltFor(p, v1alpha1.ReasonBlastRadius)
	}
	for _, c := range v.Candidates {
		pl.admit(sec, c)
	}
	reportRecurring(p, sec.Decisions)
	for _, c := range v.Unrestartable {
		pl.outside(sec, c, v1alpha1.OutcomeSkipped, UnrestartableMessage(c.Pod, c.Containers))
	}
	pl.Requeue = pl.In.Spec.EvaluationInterval
}
