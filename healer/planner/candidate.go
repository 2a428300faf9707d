package planner

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// TriggerKind is what asked for a recreation.
type TriggerKind string

// The triggers.
const (
	TriggerSchedule TriggerKind = "schedule"
	TriggerRule     TriggerKind = "rule"
)

// Trigger is one firing of a schedule or one match of a rule.
type Trigger struct {
	Kind TriggerKind
	// Rule is the rule's name, for a rule trigger.
	Rule string
	// Run is the scheduled time of the run, for a schedule trigger.
	Run time.Time
}

// String is the trigger as decisions and labels show it: schedule, or
// rule/NAME.
func (t Trigger) String() string {
	if t.Kind == TriggerRule {
		return "rule/" + t.Rule
	}
	return string(TriggerSchedule)
}

// KindOf reads the kind of a trigger as String, or a decision that
// names no pod, shows it.
func KindOf(trigger string) TriggerKind {
	if trigger == string(TriggerRule) || strings.HasPrefix(trigger, string(TriggerRule)+"/") {
		return TriggerRule
	}
	return TriggerSchedule
}

// Candidate is a recreation some trigger asks for.
type Candidate struct {
	Pod        *corev1.Pod
	Containers []string
	Trigger    Trigger
	// Reason is why: the rule's reason, or the scheduled run.
	Reason string
	// Force stops the containers even while they are starting: a rule
	// found one hung in its start, which would never finish.
	Force bool
}
