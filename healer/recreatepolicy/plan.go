package recreatepolicy

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apipods "github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/planner"
)

// plan is what a pass decides before anything is done: the policy's status
// as it will be written (but for the decisions, which acting completes),
// each decision in order with the admitted candidates to create, the events
// to send and when to look at the policy again. Planning makes no client
// call: the preview plans as the controller does.
type plan struct {
	// p is the policy whose status the plan builds.
	p  *v1alpha1.RecreatePolicy
	in *passInput
	s  *planner.Situation
	// rules and runs are what the rules' candidates and the runs come to:
	// the requests of the rules' are created before the runs' are.
	rules, runs section
	// requeue is when to look at the policy again, whatever the events;
	// zero for never.
	requeue time.Duration
	// verdicts are what the rules said, nil when they were not judged;
	// rulesDecided is false when the policy has rules this pass did not
	// decide on, so that their candidates' holds go on.
	verdicts     *ruleVerdicts
	rulesDecided bool
	// nextRun is the schedule's next fire time, zero for none; missedRuns
	// counts the runs it missed.
	nextRun    time.Time
	missedRuns int
	// explain keeps every gate's check of each candidate (a preview's).
	explain bool
}

// section is one part of a pass's decisions: its events are sent before
// its admitted candidates' requests are created.
type section struct {
	events    []policyEvent
	decisions []planned
}

// planned is one decision of a pass.
type planned struct {
	// c is the candidate decided on; nil for a decision on no pod (a run
	// not started).
	c *planner.PodCandidate
	// kind is what triggered the decision.
	kind     planner.TriggerKind
	decision v1alpha1.Decision
	// gated is true when the candidate went through the gates (and so
	// may be created); gates are their checks, when the plan explains.
	gated bool
	gates []planner.GateCheck
}

// policyEvent is an event about the policy itself.
type policyEvent struct {
	eventType, reason, action, message string
}

// newPlan starts the plan of a pass over in that builds p's status: what
// the gates know of the policy's pods.
func newPlan(p *v1alpha1.RecreatePolicy, in *passInput, explain bool) *plan {
	s := newSituation(p, in)
	if in.budgets != nil {
		s.Disruption = planner.DisruptionCheck(in.budgets, in.namespacePods, in.facts.inFlight)
	}
	return &plan{p: p, in: in, s: s, explain: explain}
}

// planPass plans a pass of a policy: v is what its rules said (nil when
// they were not judged: it has none, or they are quarantined), hasRules
// whether it has rules, budget the evaluation budget the rules ran
// within.
func planPass(p *v1alpha1.RecreatePolicy, in *passInput, hasRules bool, v *ruleVerdicts, budget time.Duration) *plan {
	pl := newPlan(p, in, false)
	if v != nil {
		pl.judged(v, budget)
	}
	if next := pl.fireRuns(); next > 0 && (pl.requeue == 0 || next < pl.requeue) {
		pl.requeue = next
	}
	evalFailures := ""
	if v != nil {
		evalFailures = v.failureText()
	}
	pl.finish(evalFailures)
	pl.rulesDecided = !hasRules || (v != nil && v.overBudget == nil && v.stopped == nil)
	return pl
}

// newSituation is what the gates know of the policy's pods from its
// requests, before the PodDisruptionBudgets are read.
func newSituation(p *v1alpha1.RecreatePolicy, in *passInput) *planner.Situation {
	spec, facts := in.spec, in.facts
	s := &planner.Situation{
		Now: in.now, Paused: in.paused, Suspended: p.Spec.Suspend, DryRun: p.Spec.DryRun, Windows: spec.Windows,
		InFlight: facts.inFlight, LastRecreated: facts.lastRecreated, Cooldown: spec.Cooldown,
		LastRule: facts.lastRule, MemoryRules: spec.MemoryRules, MemoryRecurrence: spec.MemoryRecurrence,
		CreatedLastHour: facts.createdLastHour, MaxPerHour: p.Spec.Limits.MaxPerHour,
		Selected: len(in.pods), MaxMatchingPercent: spec.MaxMatchingPercent, MinMatchingToHalt: spec.MinMatchingToHalt,
		MaxUnavailable: spec.MaxUnavailable.Of(len(in.pods)),
	}
	for _, pod := range in.pods {
		if !apipods.Ready(pod) || facts.inFlight[pod.UID] {
			s.Unavailable++
		}
	}
	return s
}

// judged plans what the rules said: the halts for what they cost or for
// matching too many pods, else the gates' decision on each candidate and
// the unrestartable left alone.
func (pl *plan) judged(v *ruleVerdicts, budget time.Duration) {
	p, sec := pl.p, &pl.rules
	pl.verdicts = v
	p.Status.LastEvaluationTime = &metav1.Time{Time: pl.in.now}
	p.Status.NoData = v.noData
	if len(v.failures) > 0 {
		sec.events = append(sec.events, policyEvent{corev1.EventTypeWarning, v1alpha1.ReasonEvaluationFailed, "Evaluate", v.failureText()})
	}
	switch {
	case v.stopped != nil:
		pl.halt(sec, v1alpha1.ReasonRuleStopped, stoppedMessage(v.stopped))
		return
	case v.overBudget != nil:
		pl.halt(sec, v1alpha1.ReasonEvaluationBudget, v.overBudget.message(len(pl.in.pods), budget))
		return
	}
	for _, reason := range ruleHalts {
		unhaltFor(p, reason)
	}
	pl.s.Matching = len(v.candidates)
	if pl.s.Halted() {
		pl.halt(sec, v1alpha1.ReasonBlastRadius, pl.s.HaltMessage())
	} else {
		unhaltFor(p, v1alpha1.ReasonBlastRadius)
	}
	for _, c := range v.candidates {
		pl.admit(sec, c)
	}
	reportRecurring(p, sec.decisions)
	for _, c := range v.unrestartable {
		pl.outside(sec, c, v1alpha1.OutcomeSkipped, unrestartableMessage(c.Pod, c.Containers))
	}
	pl.requeue = pl.in.spec.EvaluationInterval
}

// admit takes c through the gates, counting it against the limits when
// it gets through, so that the candidates after it see it.
func (pl *plan) admit(sec *section, c *planner.PodCandidate) {
	var gates []planner.GateCheck
	if pl.explain {
		gates = pl.s.Check(c)
	}
	v := pl.s.Admit(c)
	sec.decisions = append(sec.decisions, planned{c: c, kind: c.Trigger.Kind, gated: true, gates: gates,
		decision: candidateDecision(c, v.Outcome, v.Message, pl.in.now)})
}

// outside decides on a candidate the gates never see: left alone
// (Skipped) or needing nothing (UpToDate).
func (pl *plan) outside(sec *section, c *planner.PodCandidate, outcome v1alpha1.DecisionOutcome, msg string) {
	sec.decisions = append(sec.decisions, planned{c: c, kind: c.Trigger.Kind, decision: candidateDecision(c, outcome, msg, pl.in.now)})
}

// note decides something that concerns no pod, such as a run not
// started; a skipped run is also a Warning event.
func (pl *plan) note(t planner.Trigger, outcome v1alpha1.DecisionOutcome, msg string) {
	pl.runs.decisions = append(pl.runs.decisions, planned{kind: t.Kind,
		decision: v1alpha1.Decision{Time: metav1.NewTime(pl.in.now), Trigger: t.String(), Outcome: outcome, Message: msg}})
	if outcome == v1alpha1.OutcomeSkipped {
		pl.runs.events = append(pl.runs.events, policyEvent{corev1.EventTypeWarning, "RunSkipped", "Run", msg})
	}
}

// decisions are all the plan's decisions, in order.
func (pl *plan) decisions() []v1alpha1.Decision {
	out := make([]v1alpha1.Decision, 0, len(pl.rules.decisions)+len(pl.runs.decisions))
	for _, sec := range []*section{&pl.rules, &pl.runs} {
		for i := range sec.decisions {
			out = append(out, sec.decisions[i].decision)
		}
	}
	return out
}

// halt sets Halted, with a Warning event when it was not set already.
func (pl *plan) halt(sec *section, reason, msg string) {
	cur := meta.FindStatusCondition(pl.p.Status.Conditions, v1alpha1.ConditionHalted)
	halted := cur != nil && cur.Status == metav1.ConditionTrue
	if halted && cur.Reason != reason && haltRank(cur.Reason) > haltRank(reason) {
		// The higher halt stays, or lifting it would be lost; a halted
		// run says its own halt in an event (and in status.run).
		if haltRank(reason) > 0 {
			sec.events = append(sec.events, policyEvent{corev1.EventTypeWarning, "Halted", "Halt", msg})
		}
		return
	}
	if !halted {
		sec.events = append(sec.events, policyEvent{corev1.EventTypeWarning, "Halted", "Halt", msg})
	}
	setCondition(pl.p, v1alpha1.ConditionHalted, true, reason, msg)
}

// haltRank orders the reasons a policy halts for, which share its one
// Halted condition: a quarantine of its rules (ruleHalts) outranks a
// halted run, which outranks the blast radius. A halt never replaces one
// that ranks higher: a quarantine replaced by a run's halt would let the
// rules be evaluated again in the same generation, and a run's halt
// replaced by the blast radius would be lifted with it.
func haltRank(reason string) int {
	switch {
	case slices.Contains(ruleHalts, reason):
		return 2
	case reason == v1alpha1.ReasonRunFailed || reason == v1alpha1.ReasonRunTooLarge:
		return 1
	}
	return 0
}

// candidateDecision is the decision outcome, with msg, about candidate c.
func candidateDecision(c *planner.PodCandidate, outcome v1alpha1.DecisionOutcome, msg string, now time.Time) v1alpha1.Decision {
	return v1alpha1.Decision{
		Time: metav1.NewTime(now), Pod: c.Pod.Name, Containers: c.Containers,
		Trigger: c.Trigger.String(), Outcome: outcome, Reason: c.Reason, Message: msg,
	}
}
