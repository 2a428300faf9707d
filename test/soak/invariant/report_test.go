package invariant

import (
	"slices"
	"testing"
)

func TestReportListsEveryInvariantAndSortsByTime(t *testing.T) {
	s := newSoak()
	s.tick(0)
	p := newPod("web-0")
	s.pod(0, p)
	setInService(p, false)
	s.pod(10, p) // held from 10, found at 26
	s.add(Panic{At: at(20), Pod: "rejuv-system/rejuv-healer-abc-1", Line: "panic: boom"})
	s.tick(30)
	rep := s.finish(40)
	if len(rep.ByInvariant) != len(Invariants) {
		t.Errorf("ByInvariant lists %d invariants, want %d", len(rep.ByInvariant), len(Invariants))
	}
	if rep.ByInvariant[HeldOutOfService] != 1 || rep.ByInvariant[Panics] != 1 || rep.ByInvariant[Budget] != 0 {
		t.Errorf("ByInvariant %v", rep.ByInvariant)
	}
	got := []Invariant{rep.Violations[0].Invariant, rep.Violations[1].Invariant}
	if !slices.Equal(got, []Invariant{HeldOutOfService, Panics}) {
		t.Errorf("violations in the order %v, want by At", got)
	}
}

func TestReportCountsFaultsByKind(t *testing.T) {
	s := newSoak()
	s.fault(1, 1, KillLeader, "rejuv-healer-abc-1")
	s.faultEnded(2, 1)
	s.fault(3, 2, KillLeader, "rejuv-healer-abc-2")
	s.fault(4, 3, LoseNode, "node-2")
	s.faultEnded(5, 99) // a fault the checker never saw begin
	rep := s.finish(10)
	if rep.Faults[KillLeader] != 2 || rep.Faults[LoseNode] != 1 || len(rep.Faults) != 2 {
		t.Errorf("faults %v, want 2 KillLeader and 1 LoseNode", rep.Faults)
	}
}

// TestARealisticSoakIsQuiet runs a nightly rolling restart under a
// PodDisruptionBudget while the leader is killed and the client fails
// during the fault, as a healthy Rejuv would show it: no violation.
func TestARealisticSoakIsQuiet(t *testing.T) {
	s := newSoak(KillLeader)
	leader, standby := newComponent("rejuv-healer-abc-1", "node-1"), newComponent("rejuv-healer-abc-2", "node-2")
	s.component(0, leader)
	s.component(0, standby)
	s.component(0, newComponent("rejuv-daemon-x", "node-1"))
	pol := newPolicy("nightly", "1")
	s.pdb(0, newPDB("web", 3))
	rollingRun(s, pol, 10, 6.2)
	s.fault(20, 1, KillLeader, leader.Name)
	crash(leader)
	s.component(20.5, leader)
	s.component(25, standby) // takes the lease over, without a restart
	s.clientFailed(21, "shop/web")
	s.faultEnded(30, 1)
	s.policy(40, completed(pol, 10, 4))
	rep := s.finish(120)
	quiet(t, rep)
	if rep.Requests != 4 || rep.Succeeded != 4 || rep.Failed != 0 || rep.Unfinished != 0 || rep.RunsCompleted != 1 ||
		rep.Restarts != 4 || rep.ClientFailures != 1 || rep.Explained[KillLeader] != 1 || rep.Faults[KillLeader] != 1 {
		t.Errorf("report %+v", rep)
	}
}
