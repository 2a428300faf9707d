package planner

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

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
