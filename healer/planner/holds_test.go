package planner

import (
	"cmp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

func TestHoldsMeasureHowLongEachGateHeldACandidate(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	dec := func(pod, trigger string, outcome v1alpha1.DecisionOutcome) v1alpha1.Decision {
		return v1alpha1.Decision{Pod: pod, Trigger: trigger, Outcome: outcome}
	}
	all := func(TriggerKind) bool { return true }
	schedulesOnly := func(k TriggerKind) bool { return k == TriggerSchedule }
	steps := []struct {
		name    string
		at      time.Duration
		pass    []v1alpha1.Decision
		decided func(TriggerKind) bool
		want    []EndedHold
	}{
		{"web-0 and web-1 held by maxUnavailable, web-2 by the rate; a schedule candidate by the budget", 0, []v1alpha1.Decision{
			dec("web-0", "rule/leak", v1alpha1.OutcomeUnavailable), dec("web-1", "rule/leak", v1alpha1.OutcomeUnavailable),
			dec("web-2", "rule/stuck", v1alpha1.OutcomeRateLimited), dec("web-3", "schedule", v1alpha1.OutcomeDisruptionBudget),
		}, all, nil},
		{"the same gates a minute later: nothing ended, another rule of web-0 is the same candidate", time.Minute, []v1alpha1.Decision{
			dec("web-0", "rule/stuck", v1alpha1.OutcomeUnavailable), dec("web-1", "rule/leak", v1alpha1.OutcomeUnavailable),
			dec("web-2", "rule/stuck", v1alpha1.OutcomeRateLimited), dec("web-3", "schedule", v1alpha1.OutcomeDisruptionBudget),
		}, all, nil},
		{"web-0 created, web-1 now held by the PDB, web-2 not evaluated (rules over budget), web-3 gone from the run", 3 * time.Minute, []v1alpha1.Decision{
			dec("web-0", "rule/leak", v1alpha1.OutcomeCreated), dec("web-1", "rule/leak", v1alpha1.OutcomeDisruptionBudget),
			{Trigger: "schedule", Outcome: v1alpha1.OutcomeSkipped},
		}, schedulesOnly, []EndedHold{
			{v1alpha1.OutcomeUnavailable, 3 * time.Minute}, {v1alpha1.OutcomeUnavailable, 3 * time.Minute},
			{v1alpha1.OutcomeDisruptionBudget, 3 * time.Minute},
		}},
		{"the rules pass again without web-1 and web-2: both holds end", 5 * time.Minute, nil, all, []EndedHold{
			{v1alpha1.OutcomeDisruptionBudget, 2 * time.Minute}, {v1alpha1.OutcomeRateLimited, 5 * time.Minute},
		}},
		{"nothing held, nothing to end", 6 * time.Minute, []v1alpha1.Decision{dec("web-0", "rule/leak", v1alpha1.OutcomeCreated)}, all, nil},
	}
	h := Holds{}
	for _, s := range steps {
		got := h.Update(s.pass, s.decided, t0.Add(s.at))
		byGate := func(a, b EndedHold) int {
			return cmp.Or(strings.Compare(string(a.Gate), string(b.Gate)), cmp.Compare(a.Held, b.Held))
		}
		slices.SortFunc(got, byGate)
		slices.SortFunc(s.want, byGate)
		if !slices.Equal(got, s.want) {
			t.Errorf("%s: ended %v, want %v", s.name, got, s.want)
		}
	}
	if len(h) != 0 {
		t.Errorf("holds left at the end: %v", h)
	}
}
