package recreatepolicy

import (
	"fmt"
	"slices"
	"testing"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// A candidate held back at every evaluation, its message counting the
// time since the last recreation, keeps one decision, the newest, and
// the recreation before it stays in the list.
func TestRepeatedHoldsReplaceEachOther(t *testing.T) {
	var list []v1alpha1.Decision
	for _, dec := range []v1alpha1.Decision{
		{Pod: "a", Trigger: "rule/near", Outcome: v1alpha1.OutcomeCreated, Request: "near-1"},
		{Pod: "a", Trigger: "rule/near", Outcome: v1alpha1.OutcomeCooldown, Message: "container app was recreated 1s ago"},
		{Pod: "b", Trigger: "rule/near", Outcome: v1alpha1.OutcomeCooldown, Message: "container app was recreated 5s ago"},
		{Pod: "a", Trigger: "rule/near", Outcome: v1alpha1.OutcomeCooldown, Message: "container app was recreated 2s ago"},
		{Pod: "a", Trigger: "rule/near", Outcome: v1alpha1.OutcomeCooldown, Message: "container app was recreated 3s ago"},
	} {
		list = prepend(list, dec)
	}
	want := []string{"a Cooldown container app was recreated 3s ago", "b Cooldown container app was recreated 5s ago", "a Created "}
	if len(list) != len(want) {
		t.Fatalf("%d decisions %+v, want %d", len(list), list, len(want))
	}
	for i, w := range want {
		if got := list[i].Pod + " " + string(list[i].Outcome) + " " + list[i].Message; got != w {
			t.Errorf("decision %d: %q, want %q", i, got, w)
		}
	}
	// Two recreations are both kept.
	list = prepend(list, v1alpha1.Decision{Pod: "a", Trigger: "rule/near", Outcome: v1alpha1.OutcomeCreated, Request: "near-2"})
	if list[0].Request != "near-2" || len(list) != 4 {
		t.Errorf("a second recreation: %+v", list)
	}
}

// A pass of a run over many pods has far more decisions than the status
// keeps: cutting the list on each prepend keeps exactly what cutting it
// once at the end would.
func TestFlushKeepsTheSameDecisionsAsCuttingOnceAtTheEnd(t *testing.T) {
	outcomes := []v1alpha1.DecisionOutcome{v1alpha1.OutcomeCreated, v1alpha1.OutcomeUnavailable, v1alpha1.OutcomeCooldown}
	var earlier, pass []v1alpha1.Decision
	for i := range 30 {
		earlier = append(earlier, v1alpha1.Decision{Pod: fmt.Sprintf("p%d", i%7), Trigger: "schedule", Outcome: outcomes[i%3], Message: fmt.Sprintf("earlier %d", i)})
	}
	earlier = earlier[:v1alpha1.MaxRecentDecisions]
	for i := range 1000 {
		pass = append(pass, v1alpha1.Decision{Pod: fmt.Sprintf("p%d", i%37), Trigger: "schedule", Outcome: outcomes[(i/37)%3], Message: fmt.Sprintf("pass %d", i)})
	}
	want := slices.Clone(earlier)
	for _, dec := range pass {
		want = prepend(want, dec)
	}
	want = want[:v1alpha1.MaxRecentDecisions]

	p := &v1alpha1.RecreatePolicy{Status: v1alpha1.RecreatePolicyStatus{RecentDecisions: slices.Clone(earlier)}}
	(&decider{decisions: pass}).flush(p)
	if !slices.EqualFunc(p.Status.RecentDecisions, want, func(a, b v1alpha1.Decision) bool { return a.Message == b.Message }) {
		t.Fatalf("kept %v, want %v", messages(p.Status.RecentDecisions), messages(want))
	}
}

func messages(ds []v1alpha1.Decision) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Message
	}
	return out
}
