package planner

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// TestAHaltNeverReplacesOneThatRanksHigher: the reasons share one Halted
// condition. A run that halts while the rules are quarantined keeps the
// quarantine (the rules stay unevaluated in this generation) and says its
// halt in an event; the blast radius reached while a run is halted keeps
// the run's halt, so that lifting the blast radius does not lift it; a
// quarantine replaces a run's halt; the same reason again updates it.
func TestAHaltNeverReplacesOneThatRanksHigher(t *testing.T) {
	for _, tc := range []struct {
		name        string
		held, halt  string
		want        string
		quarantined bool
		events      int
	}{
		{"a run's halt under a quarantine", v1alpha1.ReasonRuleStopped, v1alpha1.ReasonRunFailed, v1alpha1.ReasonRuleStopped, true, 1},
		{"a run too large under the evaluation budget", v1alpha1.ReasonEvaluationBudget, v1alpha1.ReasonRunTooLarge, v1alpha1.ReasonEvaluationBudget, true, 1},
		{"the blast radius under a run's halt", v1alpha1.ReasonRunFailed, v1alpha1.ReasonBlastRadius, v1alpha1.ReasonRunFailed, false, 0},
		{"a quarantine over a run's halt", v1alpha1.ReasonRunFailed, v1alpha1.ReasonEvaluationInterrupted, v1alpha1.ReasonEvaluationInterrupted, true, 0},
		{"a run's halt over the blast radius", v1alpha1.ReasonBlastRadius, v1alpha1.ReasonRunFailed, v1alpha1.ReasonRunFailed, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &v1alpha1.RecreatePolicy{}
			p.Generation = 1
			SetCondition(p, v1alpha1.ConditionHalted, true, tc.held, "held: "+tc.held)
			pl := &Plan{Policy: p}
			pl.halt(&pl.Runs, tc.halt, "new: "+tc.halt)
			c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionHalted)
			if c == nil || c.Reason != tc.want {
				t.Errorf("Halted %+v, want reason %s", c, tc.want)
			}
			if got := Quarantined(p); got != tc.quarantined {
				t.Errorf("quarantined %v, want %v", got, tc.quarantined)
			}
			if len(pl.Runs.Events) != tc.events {
				t.Errorf("events %+v, want %d", pl.Runs.Events, tc.events)
			}
			UnhaltFor(p, v1alpha1.ReasonBlastRadius)
			if c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionHalted); tc.want != v1alpha1.ReasonBlastRadius && c.Reason != tc.want {
				t.Errorf("lifting the blast radius lifted %s", tc.want)
			}
		})
	}
}
