package invariant

import "testing"

func TestObservationsWithoutAnObjectAreIgnored(t *testing.T) {
	s := newSoak()
	s.add(PodSeen{At: at(1)})
	s.add(RequestSeen{At: at(2)})
	s.add(PolicySeen{At: at(3)})
	s.add(BudgetSeen{At: at(4)})
	s.add(ComponentSeen{At: at(5)})
	rep := s.finish(10)
	quiet(t, rep)
	if rep.Requests != 0 {
		t.Errorf("requests %d, want 0", rep.Requests)
	}
}

func TestAFinishWithoutObservationsIsEmpty(t *testing.T) {
	rep := NewChecker(DefaultSlack(), nil).Finish(at(0))
	quiet(t, rep)
	if len(rep.ByInvariant) != len(Invariants) {
		t.Errorf("ByInvariant lists %d invariants, want %d", len(rep.ByInvariant), len(Invariants))
	}
}
