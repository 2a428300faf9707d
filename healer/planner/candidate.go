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
	// Requested says the run was requested by the policy's restartAt
	// rather than fired by its schedule.
	Requested bool
}

// Restart is how a run requested by restartAt shows as a trigger; it is
// of kind TriggerSchedule.
const Restart = "restart"

// String is the trigger as decisions and labels show it: schedule,
// restart, or rule/NAME.
func (t Trigger) String() string {
	switch {
	case t.Kind == TriggerRule:
		return "rule/" + t.Rule
	case t.Requested:
		return Restart
	}
	return string(TriggerSchedule)
}

// RunReason is the reason a run gives its requests and decisions: which
// run, named by its time, so that a reader tells one run's from another's
// without comparing timestamps.
func (t Trigger) RunReason() string {
	at := t.Run.UTC().Format(time.RFC3339)
	if t.Requested {
		return "rolling restart requested for " + at
	}
	return "scheduled run of " + at
}

// KindOf reads the kind of a trigger as String, or a decision that
// names no pod, shows it: a requested run is of kind TriggerSchedule.
func KindOf(trigger string) TriggerKind {
	if trigger == string(TriggerRule) || strings.HasPrefix(trigger, string(TriggerRule)+"/") {
		return TriggerRule
	}
	return TriggerSchedule
}

// PodCandidate is a recreation of a pod's containers that some trigger asks for.
type PodCandidate struct {
	Pod        *corev1.Pod
	Containers []string
	Trigger    Trigger
	// Reason is why: the rule's reason, or the scheduled run.
	Reason string
	// Force stops the containers even while they are starting: a rule
	// found one hung in its start, which would never finish.
	Force bool
	// Attempt counts the policy's requests for the same finding (a rule's,
	// of the same container instances) that failed before: a retry is a
	// request of its own.
	Attempt int
}
