package planner

import (
	"time"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// Holds remembers, for one policy, which gate holds each candidate back and
// since when, to tell how long gates hold candidates back. It lives in the
// manager's memory: a restart or a new leader starts the clocks again.
type Holds map[holdKey]heldSince

// holdKey is a candidate across passes: its pod and what triggers it.
type holdKey struct {
	pod  string
	kind TriggerKind
}

// heldSince is the gate holding a candidate back, and since when.
type heldSince struct {
	gate  v1alpha1.DecisionOutcome
	since time.Time
}

// EndedHold is how long a gate held one candidate back.
type EndedHold struct {
	Gate v1alpha1.DecisionOutcome
	Held time.Duration
}

// Update takes one pass's decisions and returns the holds that ended: a
// candidate let through or held by another gate, or one of a trigger
// kind the pass decided (decided says which) that the pass did not name.
func (h Holds) Update(passDecisions []v1alpha1.Decision, decided func(TriggerKind) bool, now time.Time) []EndedHold {
	var ended []EndedHold
	end := func(k holdKey) {
		ended = append(ended, EndedHold{Gate: h[k].gate, Held: now.Sub(h[k].since)})
		delete(h, k)
	}
	seen := map[holdKey]bool{}
	for _, d := range passDecisions {
		if d.Pod == "" {
			continue
		}
		k := holdKey{pod: d.Pod, kind: KindOf(d.Trigger)}
		seen[k] = true
		old, held := h[k]
		if held && old.gate == d.Outcome {
			continue
		}
		if held {
			end(k)
		}
		if IsGate(d.Outcome) {
			h[k] = heldSince{gate: d.Outcome, since: now}
		}
	}
	for k := range h {
		if !seen[k] && decided(k.kind) {
			end(k)
		}
	}
	return ended
}

// HeldBy is the gate that held the candidate of pod and kind back at the
// last pass, "" for none.
func (h Holds) HeldBy(pod string, kind TriggerKind) v1alpha1.DecisionOutcome {
	return h[holdKey{pod: pod, kind: kind}].gate
}
