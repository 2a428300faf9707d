package recreatepolicy

import (
	"time"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/planner"
)

// holds remembers, for one policy, which gate holds each candidate back and
// since when, to tell how long gates hold candidates back. It lives in the
// manager's memory: a restart or a new leader starts the clocks again.
type holds map[holdKey]hold

// holdKey is a candidate across passes: its pod and what triggers it.
type holdKey struct {
	pod  string
	kind planner.TriggerKind
}

type hold struct {
	gate  v1alpha1.DecisionOutcome
	since time.Time
}

// update takes one pass's decisions and returns the holds that ended: a
// candidate let through or held by another gate, or one of a trigger
// kind the pass decided (decided says which) that the pass did not name.
func (h holds) update(passDecisions []v1alpha1.Decision, decided func(planner.TriggerKind) bool, now time.Time) []endedHold {
	var ended []endedHold
	end := func(k holdKey) {
		ended = append(ended, endedHold{gate: h[k].gate, held: now.Sub(h[k].since)})
		delete(h, k)
	}
	seen := map[holdKey]bool{}
	for _, d := range passDecisions {
		if d.Pod == "" {
			continue
		}
		k := holdKey{pod: d.Pod, kind: planner.KindOf(d.Trigger)}
		seen[k] = true
		old, held := h[k]
		if held && old.gate == d.Outcome {
			continue
		}
		if held {
			end(k)
		}
		if planner.IsGate(d.Outcome) {
			h[k] = hold{gate: d.Outcome, since: now}
		}
	}
	for k := range h {
		if !seen[k] && decided(k.kind) {
			end(k)
		}
	}
	return ended
}
