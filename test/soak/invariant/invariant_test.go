package invariant

import "testing"

func TestInvariantsAreListedInTheSummaryOrder(t *testing.T) {
	want := []string{"maxUnavailable", "PodDisruptionBudget", "once per decision", "every request ends", "status matches",
		"no pod held out of service", "no failed client request", "run reports match", "no unexplained component restart", "no panic"}
	if len(Invariants) != len(want) {
		t.Fatalf("%d invariants, want %d", len(Invariants), len(want))
	}
	for i, inv := range Invariants {
		if string(inv) != want[i] {
			t.Errorf("invariant %d is %q, want %q", i, inv, want[i])
		}
	}
}
