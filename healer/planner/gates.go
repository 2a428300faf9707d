package planner

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
)

// Situation is what the gates know of a policy and its pods at one moment.
// Admit updates it as candidates get through, so that one pass over many
// candidates never lets more through than the limits allow.
type Situation struct {
	Now time.Time
	// Paused is why nothing may be recreated cluster-wide (the emergency
	// stop), "" when Rejuv is not paused.
	Paused    string
	Suspended bool
	DryRun    bool
	Windows   []policyspec.Window

	// InFlight are the pods with a recreation request that has not ended.
	InFlight map[types.UID]bool
	// LastRecreated is when the policy last recreated each container.
	LastRecreated map[ContainerKey]time.Time
	Cooldown      time.Duration
	// LastRule is the rule whose match made the policy's last request for
	// each container, absent when a run made it.
	LastRule map[ContainerKey]string
	// MemoryRules are the policy's rules that read the memory signal;
	// MemoryRecurrence is limits.memoryRecurrence.
	MemoryRules      map[string]bool
	MemoryRecurrence time.Duration

	// CreatedLastHour are the policy's requests created in the last hour;
	// MaxPerHour is nil for no limit.
	CreatedLastHour int
	MaxPerHour      *int32

	// Selected is how many pods the policy selects, Matching how many of
	// them its rules match in this evaluation; over MaxMatchingPercent, and
	// at least MinMatchingToHalt, the policy halts its rule-triggered work.
	Selected           int
	Matching           int
	MaxMatchingPercent int32
	MinMatchingToHalt  int32

	// Unavailable counts the selected pods that are not Ready or have a
	// request in flight; MaxUnavailable is how many may be.
	Unavailable    int
	MaxUnavailable int

	// Disruption tells whether the PodDisruptionBudgets let a pod go, and
	// takes one disruption of them for a pod admitted; nil when budgets
	// are not respected.
	Disruption Disruption
}

// Disruption is what the PodDisruptionBudgets covering the pods allow.
type Disruption interface {
	// Allows tells whether the budgets covering the pod allow one more
	// disruption now, and why not.
	Allows(podUID types.UID) (allowed bool, why string)
	// Take counts an admitted pod's disruption against its budgets.
	Take(podUID types.UID)
}

// ContainerKey names a container of a pod.
type ContainerKey struct {
	Pod       types.UID
	Container string
}

// Verdict is what the gates made of a candidate.
type Verdict struct {
	Outcome v1alpha1.DecisionOutcome
	// Message explains a candidate held back.
	Message string
}

// Admitted reports whether the candidate goes on to a request (or, in dry
// run, would).
func (v Verdict) Admitted() bool {
	return v.Outcome == v1alpha1.OutcomeCreated || v.Outcome == v1alpha1.OutcomeDryRun
}

// Halted reports whether the rules match more of the selected pods than the
// policy allows.
func (s *Situation) Halted() bool {
	return s.Selected > 0 && s.Matching >= int(s.MinMatchingToHalt) && s.Matching*100 > int(s.MaxMatchingPercent)*s.Selected
}

// HaltMessage says why the policy halts, when Halted.
func (s *Situation) HaltMessage() string {
	return fmt.Sprintf("rules match %d of %d selected pods, over limits.maxMatchingPercent %d%%", s.Matching, s.Selected, s.MaxMatchingPercent)
}

// gate is one of Admit's checks: it holds a candidate back, saying why,
// or lets it through with "".
type gate struct {
	outcome v1alpha1.DecisionOutcome
	// rulesOnly gates guard against rules acting too often or too
	// widely; a run, which the operator asked for, passes them.
	rulesOnly bool
	hold      func(s *Situation, c *PodCandidate) string
}

// gates in the order of the design.
var gates = []gate{
	{v1alpha1.OutcomePaused, false, func(s *Situation, _ *PodCandidate) string { return s.Paused }},
	{v1alpha1.OutcomeSuspended, false, func(s *Situation, _ *PodCandidate) string {
		return when(s.Suspended, "the policy is suspended")
	}},
	{v1alpha1.OutcomeOutsideWindow, true, func(s *Situation, _ *PodCandidate) string {
		return when(len(s.Windows) > 0 && !s.insideWindow(), "outside every window of spec.windows")
	}},
	{v1alpha1.OutcomeInFlight, false, func(s *Situation, c *PodCandidate) string {
		return when(s.InFlight[c.Pod.UID], "the pod has a recreation in flight")
	}},
	{v1alpha1.OutcomeCooldown, true, (*Situation).coolingDown},
	{v1alpha1.OutcomeRecurring, true, (*Situation).recurring},
	{v1alpha1.OutcomeRateLimited, false, func(s *Situation, _ *PodCandidate) string {
		if s.MaxPerHour != nil && s.CreatedLastHour >= int(*s.MaxPerHour) {
			return fmt.Sprintf("%d recreations in the last hour, limits.maxPerHour is %d", s.CreatedLastHour, *s.MaxPerHour)
		}
		return ""
	}},
	{v1alpha1.OutcomeHalted, true, func(s *Situation, _ *PodCandidate) string {
		return when(s.Halted(), s.HaltMessage())
	}},
	{v1alpha1.OutcomeUnavailable, false, func(s *Situation, c *PodCandidate) string {
		// A pod that is unavailable already does not take another unit
		// of the budget.
		if pods.Ready(c.Pod) && s.Unavailable >= s.MaxUnavailable {
			return fmt.Sprintf("%d of %d selected pods unavailable, rollout.maxUnavailable allows %d", s.Unavailable, s.Selected, s.MaxUnavailable)
		}
		return ""
	}},
	{v1alpha1.OutcomeDisruptionBudget, false, func(s *Situation, c *PodCandidate) string {
		if s.Disruption == nil {
			return ""
		}
		if ok, why := s.Disruption.Allows(c.Pod.UID); !ok {
			return why
		}
		return ""
	}},
}

func when(cond bool, msg string) string {
	if cond {
		return msg
	}
	return ""
}

// Gates are the outcomes of a candidate held back, in the order Admit
// tries them: each names the gate that held it.
var Gates = func() []v1alpha1.DecisionOutcome {
	out := make([]v1alpha1.DecisionOutcome, len(gates))
	for i, g := range gates {
		out[i] = g.outcome
	}
	return out
}()

// IsGate reports whether outcome is a gate holding a candidate back.
func IsGate(outcome v1alpha1.DecisionOutcome) bool {
	return slices.Contains(Gates, outcome)
}

// Admit passes c through the gates, in the order of the design: paused,
// suspended,
// outside window (rules only), request in flight, cooldown (rules only),
// rate, blast radius (rules only), maxUnavailable, PodDisruptionBudget, dry
// run. The first that holds it back decides; an admitted candidate is
// counted against the limits. A run (scheduled or requested) is what the
// operator asked for at that time: windows, cooldown and blast radius,
// which guard against rules acting too often or too widely, do not hold
// it back.
func (s *Situation) Admit(c *PodCandidate) Verdict {
	rule := c.Trigger.Kind == TriggerRule
	for _, g := range gates {
		if g.rulesOnly && !rule {
			continue
		}
		if msg := g.hold(s, c); msg != "" {
			return Verdict{g.outcome, msg}
		}
	}
	s.InFlight[c.Pod.UID] = true
	s.CreatedLastHour++
	if s.Disruption != nil {
		s.Disruption.Take(c.Pod.UID)
	}
	if pods.Ready(c.Pod) {
		s.Unavailable++
	}
	if s.DryRun {
		return Verdict{Outcome: v1alpha1.OutcomeDryRun}
	}
	return Verdict{Outcome: v1alpha1.OutcomeCreated}
}

// GateCheck is what one gate makes of a candidate.
type GateCheck struct {
	Gate v1alpha1.DecisionOutcome
	// Applies is false for a gate that only holds rules back, for a run's
	// candidate.
	Applies bool
	// Message says why the gate holds the candidate back; empty when it
	// lets it through.
	Message string
}

// Check says what every gate makes of c now, in Admit's order, without
// counting c against the limits: where Admit stops at the first gate that
// holds a candidate back, Check shows each of them.
func (s *Situation) Check(c *PodCandidate) []GateCheck {
	rule := c.Trigger.Kind == TriggerRule
	out := make([]GateCheck, 0, len(gates))
	for _, g := range gates {
		check := GateCheck{Gate: g.outcome, Applies: rule || !g.rulesOnly}
		if check.Applies {
			check.Message = g.hold(s, c)
		}
		out = append(out, check)
	}
	return out
}

func (s *Situation) insideWindow() bool {
	for i := range s.Windows {
		if s.Windows[i].Contains(s.Now) {
			return true
		}
	}
	return false
}

// recurring names a container of c that a memory rule of the policy
// recreated less than MemoryRecurrence ago, when a memory rule matches it
// again.
func (s *Situation) recurring(c *PodCandidate) string {
	if s.MemoryRecurrence <= 0 || c.Trigger.Kind != TriggerRule || !s.MemoryRules[c.Trigger.Rule] {
		return ""
	}
	for _, name := range c.Containers {
		key := ContainerKey{c.Pod.UID, name}
		last, ok := s.LastRecreated[key]
		by := s.LastRule[key]
		if ok && s.MemoryRules[by] && s.Now.Sub(last) < s.MemoryRecurrence {
			return fmt.Sprintf("container %s: rule %s matches it again %s after rule %s recreated it; a leak that comes back within limits.memoryRecurrence %s is reported, not recreated again",
				name, c.Trigger.Rule, s.Now.Sub(last).Round(time.Second), by, s.MemoryRecurrence)
		}
	}
	return ""
}

// coolingDown names a container of c recreated less than the cooldown ago.
func (s *Situation) coolingDown(c *PodCandidate) string {
	if s.Cooldown <= 0 {
		return ""
	}
	for _, name := range c.Containers {
		last, ok := s.LastRecreated[ContainerKey{c.Pod.UID, name}]
		if ok && s.Now.Sub(last) < s.Cooldown {
			return fmt.Sprintf("container %s was recreated %s ago, limits.cooldown is %s", name, s.Now.Sub(last).Round(time.Second), s.Cooldown)
		}
	}
	return ""
}
