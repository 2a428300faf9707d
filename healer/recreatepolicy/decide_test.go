package recreatepolicy

import (
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
