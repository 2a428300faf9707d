package planner

import (
	"testing"
	"time"
)

func TestKindOfReadsWhatStringShows(t *testing.T) {
	for _, tr := range []Trigger{{Kind: TriggerRule, Rule: "memory-leak"}, {Kind: TriggerSchedule, Run: time.Now()}, {Kind: TriggerSchedule, Run: time.Now(), Requested: true}} {
		if got := KindOf(tr.String()); got != tr.Kind {
			t.Errorf("KindOf(%q) = %s, want %s", tr.String(), got, tr.Kind)
		}
		if got := KindOf(string(tr.Kind)); got != tr.Kind {
			t.Errorf("KindOf(%q) = %s, want %s", tr.Kind, got, tr.Kind)
		}
	}
}
