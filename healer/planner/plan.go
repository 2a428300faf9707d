package planner

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apipods "github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// Plan is what a pass decides before anything is done: the policy's status
// as it will be written (but for the decisions, which acting completes),
// each decision in order with the admitted candidates to create, the events
// to send and when to look at the policy again. It is planning's one
// output, which the controller's act and write steps consume; planning
// makes no client call (this package has no client), and the preview
// plans as the controller does.
type Plan struct {
	// Policy is the policy whose status the plan builds; In and Situation
	// are what it was planned from.
	Policy    *v1alpha1.RecreatePolicy
	In        *Input
	Situation *Situation
	// Rules and Runs are what the rules' candidates and the runs come to:
	// the requests of the rules' are created before the runs' are.
	Rules, Runs Section
	// Requeue is when to look at the policy again, whatever the events;
	// zero for never.
	Requeue time.Duration
	// Verdicts are what the rules said, nil when they were not judged;
	// RulesDecided is false when the policy has rules this pass did not
	// decide on, so that their candidates' holds go on.
	Verdicts     *Verdicts
	RulesDecided bool
	// NextRun is the schedule's next fire time, zero for none; MissedRuns
	// counts the runs it missed.
	NextRun    time.Time
	MissedRuns int
	// explain keeps every gate's check of each candidate (a preview's).
	explain bool
}

// Section is one part of a pass's decisions: its events are sent before
// its admitted candidates' requests are created.
type Section struct {
	Events    []PolicyEvent
	Decisions []Planned
}

// Planned is one decision of a pass.
type Planned struct {
	// Candidate is the candidate decided on; nil for a decision on no pod
	// (a run not started).
	Candidate *PodCandidate
	// Kind is what triggered the decision.
	Kind     TriggerKind
	Decision v1alpha1.Decision
	// Gated is true when the candidate went through the gates (and so
	// may be created); Gates are their checks, when the plan explains.
	Gated bool
	Gates []GateCheck
}

// Admitted says whether the decision is to create the candidate's request.
func (e *Planned) Admitted() bool {
	return e.Gated && e.Decision.Outcome == v1alpha1.OutcomeCreated
}

// PolicyEvent is an event about the policy itself.
type PolicyEvent struct {
	Type, Reason, Action, Message string
}

// Verdicts is what the rules said of the selected pods, as planning reads
// it.
type Verdicts struct {
	Candidates []*PodCandidate
	// Unrestartable are the pods the rules matched whose matched
	// containers the kubelet would not start again once stopped (by the
	// pod's restartPolicy or the container's own, see pods.Restartable):
	// left alone, with a decision.
	Unrestartable []*PodCandidate
	NoData        []v1alpha1.RuleNoData
	// Failures sums up the rules that failed, "" when none did.
	Failures string
	// Stopped says which rule the sandbox stopped, OverBudget how the pass
	// ran out of the evaluation budget; either halts the policy, and the
	// pods after that were not evaluated. "" when neither happened.
	Stopped, OverBudget string
}

// NewPlan starts the plan of a pass over in that builds p's status: what
// the gates know of the policy's pods. A plan that explains keeps every
// gate's check of each candidate (a preview's).
func NewPlan(p *v1alpha1.RecreatePolicy, in *Input, explain bool) *Plan {
	s := newSituation(p, in)
	if in.Budgets != nil {
		s.Disruption = DisruptionCheck(in.Budgets, in.NamespacePods, in.Facts.InFlight)
	}
	return &Plan{Policy: p, In: in, Situation: s, explain: explain}
}

// newSituation is what the gates know of the policy's pods from its
// requests, before the PodDisruptionBudgets are read.
func newSituation(p *v1alpha1.RecreatePolicy, in *Input) *Situation {
	spec, facts := in.Spec, in.Facts
	s := &Situation{
		Now: in.Now, Paused: in.Paused, Suspended: p.Spec.Suspend, DryRun: p.Spec.DryRun, Windows: spec.Windows,
		InFlight: facts.InFlight, LastRecreated: facts.LastRecreated, Cooldown: spec.Cooldown,
		LastRule: facts.LastRule, MemoryRules: spec.MemoryRules, MemoryRecurrence: spec.MemoryRecurrence,
		CreatedLastHour: facts.CreatedLastHour, MaxPerHour: p.Spec.Limits.MaxPerHour,
		Selected: len(in.Pods), MaxMatchingPercent: spec.MaxMatchingPercent, MinMatchingToHalt: spec.MinMatchingToHalt,
		MaxUnavailable: spec.MaxUnavailable.Of(len(in.Pods)),
	}
	for _, pod := range in.Pods {
		if !apipods.Ready(pod) || facts.InFlight[pod.UID] {
			s.Unavailable++
		}
	}
	return s
}

// admit takes c through the gates, counting it against the limits when
// it gets through, so that the candidates after it see it.
func (pl *Plan) admit(sec *Section, c *PodCandidate) {
	var gates []GateCheck
	if pl.explain {
		gates = pl.Situation.Check(c)
	}
	v := pl.Situation.Admit(c)
	sec.Decisions = append(sec.Decisions, Planned{Candidate: c, Kind: c.Trigger.Kind, Gated: true, Gates: gates,
		Decision: candidateDecision(c, v.Outcome, v.Message, pl.In.Now)})
}

// outside decides on a candidate the gates never see: left alone
// (Skipped) or needing nothing (UpToDate).
func (pl *Plan) outside(sec *Section, c *PodCandidate, outcome v1alpha1.DecisionOutcome, msg string) {
	sec.Decisions = append(sec.Decisions, Planned{Candidate: c, Kind: c.Trigger.Kind, Decision: candidateDecision(c, outcome, msg, pl.In.Now)})
}

// note decides something that concerns no pod, such as a run not
// started; a skipped run is also a Warning event.
func (pl *Plan) note(t Trigger, outcome v1alpha1.DecisionOutcome, msg string) {
	pl.Runs.Decisions = append(pl.Runs.Decisions, Planned{Kind: t.Kind,
		Decision: v1alpha1.Decision{Time: metav1.NewTime(pl.In.Now), Trigger: t.String(), Outcome: outcome, Message: msg}})
	if outcome == v1alpha1.OutcomeSkipped {
		pl.Runs.Events = append(pl.Runs.Events, PolicyEvent{corev1.EventTypeWarning, "RunSkipped", "Run", msg})
	}
}

// Decisions are all the plan's decisions, in order.
func (pl *Plan) Decisions() []v1alpha1.Decision {
	out := make([]v1alpha1.Decision, 0, len(pl.Rules.Decisions)+len(pl.Runs.Decisions))
	for _, sec := range []*Section{&pl.Rules, &pl.Runs} {
		for i := range sec.Decisions {
			out = append(out, sec.Decisions[i].Decision)
		}
	}
	return out
}

// candidateDecision is the decision outcome, with msg, about candidate c.
func candidateDecision(c *PodCandidate, outcome v1alpha1.DecisionOutcome, msg string, now time.Time) v1alpha1.Decision {
	return v1alpha1.Decision{
		Time: metav1.NewTime(now), Pod: c.Pod.Name, Containers: c.Containers,
		Trigger: c.Trigger.String(), Outcome: outcome, Reason: c.Reason, Message: msg,
	}
}
