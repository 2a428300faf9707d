package planner

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// The status a plan builds: its counts and the conditions that sum up
// the policy.

// finish sets the counts and the conditions that sum up the policy;
// evalFailures sums up the rules that failed, "" for none.
func (pl *Plan) finish(evalFailures string) {
	p, s := pl.Policy, pl.Situation
	p.Status.SelectedPods = int32(len(pl.In.Pods))
	p.Status.ActiveRecreations = int32(pl.In.Facts.Own)
	if meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionHalted) == nil {
		Unhalt(p)
	}
	if max := p.Spec.Limits.MaxPerHour; max != nil && s.CreatedLastHour >= int(*max) {
		SetCondition(p, v1alpha1.ConditionBudgetExhausted, true, v1alpha1.ReasonRateLimited,
			fmt.Sprintf("%d recreations in the last hour, limits.maxPerHour is %d", s.CreatedLastHour, *max))
	} else {
		SetCondition(p, v1alpha1.ConditionBudgetExhausted, false, v1alpha1.ReasonWithinBudget, "")
	}
	switch {
	case pl.In.Paused != "":
		SetCondition(p, v1alpha1.ConditionReady, false, v1alpha1.ReasonPaused, pl.In.Paused)
	case p.Spec.Suspend:
		SetCondition(p, v1alpha1.ConditionReady, false, v1alpha1.ReasonSuspended, "spec.suspend is true")
	case p.Spec.DryRun:
		SetCondition(p, v1alpha1.ConditionReady, true, v1alpha1.ReasonDryRun, "decisions are recorded, no request is created")
	case evalFailures != "":
		SetCondition(p, v1alpha1.ConditionReady, true, v1alpha1.ReasonEvaluationFailed, evalFailures)
	default:
		SetCondition(p, v1alpha1.ConditionReady, true, v1alpha1.ReasonActive, "")
	}
}

// recurringListed is how many held pods the MemoryRecurring condition
// names.
const recurringListed = 5

// reportRecurring sets the MemoryRecurring condition from a pass's rule
// decisions: True, naming the pods, while limits.memoryRecurrence holds
// some back. The message names no elapsed time, so that it changes only
// when the pods held do.
func reportRecurring(p *v1alpha1.RecreatePolicy, decisions []Planned) {
	var held []string
	for _, e := range decisions {
		d := e.Decision
		if d.Outcome == v1alpha1.OutcomeRecurring {
			held = append(held, fmt.Sprintf("%s (%s, %s)", d.Pod, strings.Join(d.Containers, ","), d.Trigger))
		}
	}
	if len(held) == 0 {
		SetCondition(p, v1alpha1.ConditionMemoryRecurring, false, v1alpha1.ReasonNoRecurrence, "")
		return
	}
	msg := fmt.Sprintf("%d pods held back, their memory rules matching again within limits.memoryRecurrence of recreating them: %s",
		len(held), strings.Join(held[:min(len(held), recurringListed)], ", "))
	if len(held) > recurringListed {
		msg += fmt.Sprintf(" and %d more", len(held)-recurringListed)
	}
	SetCondition(p, v1alpha1.ConditionMemoryRecurring, true, v1alpha1.ReasonLeakRecurred, msg)
}
