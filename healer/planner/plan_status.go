package planner

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// The status a plan builds: its halts, its counts and the conditions that
// sum up the policy; and the conditions' rules, which the controller
// applies too.

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

// halt sets Halted, with a Warning event when it was not set already.
func (pl *Plan) halt(sec *Section, reason, msg string) {
	cur := meta.FindStatusCondition(pl.Policy.Status.Conditions, v1alpha1.ConditionHalted)
	halted := cur != nil && cur.Status == metav1.ConditionTrue
	if halted && cur.Reason != reason && haltRank(cur.Reason) > haltRank(reason) {
		// The higher halt stays, or lifting it would be lost; a halted
		// run says its own halt in an event (and in status.run).
		if haltRank(reason) > 0 {
			sec.Events = append(sec.Events, PolicyEvent{corev1.EventTypeWarning, "Halted", "Halt", msg})
		}
		return
	}
	if !halted {
		sec.Events = append(sec.Events, PolicyEvent{corev1.EventTypeWarning, "Halted", "Halt", msg})
	}
	SetCondition(pl.Policy, v1alpha1.ConditionHalted, true, reason, msg)
}

// SetCondition sets the policy's condition kind, its message cut to the
// condition's bound (a rule's error may echo a value of any size).
func SetCondition(p *v1alpha1.RecreatePolicy, kind string, ok bool, reason, msg string) {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&p.Status.Conditions, metav1.Condition{
		Type: kind, Status: status, Reason: reason, Message: v1alpha1.Truncate(msg, v1alpha1.MaxMessageLength), ObservedGeneration: p.Generation,
	})
}

// Unhalt lifts the policy's halt, whatever its reason.
func Unhalt(p *v1alpha1.RecreatePolicy) {
	SetCondition(p, v1alpha1.ConditionHalted, false, v1alpha1.ReasonNotHalted, "")
}

// HaltedFor returns the Halted condition when the policy is halted for
// reason, else nil.
func HaltedFor(p *v1alpha1.RecreatePolicy, reason string) *metav1.Condition {
	c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionHalted)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != reason {
		return nil
	}
	return c
}

// UnhaltFor lifts a halt for reason, and no other.
func UnhaltFor(p *v1alpha1.RecreatePolicy, reason string) {
	if HaltedFor(p, reason) != nil {
		Unhalt(p)
	}
}

// RuleHalts are the reasons a policy halts for what its rules cost; a
// clean pass of a new generation lifts them.
var RuleHalts = []string{v1alpha1.ReasonEvaluationBudget, v1alpha1.ReasonRuleStopped, v1alpha1.ReasonEvaluationInterrupted}

// Quarantined says whether this generation of the policy is halted for
// what its rules cost: the evaluation budget, a rule the sandbox stopped,
// or a manager that restarted during one. Its rules are not evaluated
// again, so that one policy's rules cannot take a worker at every pass,
// or the manager at every restart.
func Quarantined(p *v1alpha1.RecreatePolicy) bool {
	for _, reason := range RuleHalts {
		if c := HaltedFor(p, reason); c != nil && c.ObservedGeneration == p.Generation {
			return true
		}
	}
	return false
}

// haltRank orders the reasons a policy halts for, which share its one
// Halted condition: a quarantine of its rules (RuleHalts) outranks a
// halted run, which outranks the blast radius. A halt never replaces one
// that ranks higher: a quarantine replaced by a run's halt would let the
// rules be evaluated again in the same generation, and a run's halt
// replaced by the blast radius would be lifted with it.
func haltRank(reason string) int {
	switch {
	case slices.Contains(RuleHalts, reason):
		return 2
	case reason == v1alpha1.ReasonRunFailed || reason == v1alpha1.ReasonRunTooLarge:
		return 1
	}
	return 0
}
