package invariant

import (
	"fmt"
	"strings"
	"testing"
)

func TestNoPodIsHeldOutOfService(t *testing.T) {
	type fault struct {
		kind     Fault
		from, to float64
	}
	cases := []struct {
		name string
		// out and back are when the pod is seen out of service and back.
		out, back float64
		request   bool
		deleting  bool
		faults    []fault
		want      int
	}{
		{"back within the slack", 10, 24, false, false, nil, 0},
		{"held too long", 10, 30, false, false, nil, 1},
		{"never back", 10, 0, false, false, nil, 1},
		{"held while its request is in flight", 10, 100, true, false, nil, 0},
		{"being deleted", 10, 100, false, true, nil, 0},
		{"the leader was killed meanwhile", 10, 40, false, false, []fault{{KillLeader, 12, 30}}, 0},
		{"the webhook was unreachable, then too long", 10, 60, false, false, []fault{{WebhookUnreachable, 12, 30}}, 1},
		{"a fault that does not keep pods out", 10, 40, false, false, []fault{{KillDaemon, 12, 30}}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSoak()
			p := newPod("web-0")
			s.pod(0, p)
			for i, f := range tc.faults {
				s.fault(f.from, i, f.kind, "rejuv-healer-0")
				s.faultEnded(f.to, i)
			}
			if tc.request {
				s.request(tc.out-1, newRequest("a", p, nil))
			}
			if tc.deleting {
				now := p.CreationTimestamp
				p.DeletionTimestamp = &now
			}
			setInService(p, false)
			s.pod(tc.out, p)
			if tc.back > 0 {
				setInService(p, true)
				s.pod(tc.back, p)
			}
			s.tick(100)
			rep := s.finish(120)
			expect(t, rep, HeldOutOfService, tc.want, "out of service (KruisePodReady False) with no request in flight")
			if tc.want > 0 {
				v := only(rep, HeldOutOfService)[0]
				if !v.At.Equal(at(tc.out)) {
					t.Errorf("violation at %s, want +%.0fs", v.At.Sub(start), tc.out)
				}
				back := strings.Contains(strings.Join(v.Evidence, "\n"), "back in service or gone")
				if back != (tc.back > 0) {
					t.Errorf("evidence says back %t, want %t:\n%s", back, tc.back > 0, strings.Join(v.Evidence, "\n"))
				}
			}
		})
	}
}

func TestAPodBackSoonAfterItsRequestIsNotHeld(t *testing.T) {
	s := newSoak()
	p := newPod("web-0")
	s.pod(0, p)
	r := newRequest("a", p, nil)
	s.recreation(10, r, p, 20) // out at 11, request ends at 16, back at 30
	s.tick(40)
	rep := s.finish(60)
	expect(t, rep, HeldOutOfService, 0, "")

	s = newSoak()
	p = newPod("web-0")
	s.pod(0, p)
	s.recreation(10, newRequest("a", p, nil), p, 40) // back 34 s after the request ended
	rep = s.finish(60)
	expect(t, rep, HeldOutOfService, 1, "with no request in flight")
	if v := only(rep, HeldOutOfService)[0]; !v.At.Equal(at(16)) {
		t.Errorf("held from %s, want from the request's end at +16s", v.At.Sub(start))
	}
}

// TestALostNodeWithEveryManagerReplicaKeepsPodsOut: in seed 12's hour both
// manager replicas ran on the node that was lost (their anti-affinity is
// only preferred), and a pod whose request had just ended stayed out of
// service until the node, and a manager with it, was back. Losing the node
// every replica runs on keeps the manager away; losing one that some
// replica does not run on does not.
func TestALostNodeWithEveryManagerReplicaKeepsPodsOut(t *testing.T) {
	for _, tc := range []struct {
		name     string
		replicas []string // the manager replicas' nodes
		want     int
	}{
		{"every replica on the lost node", []string{"node-2", "node-2"}, 0},
		{"a replica elsewhere", []string{"node-2", "node-1"}, 1},
		{"a replica elsewhere being deleted", []string{"node-2", "node-1 deleting"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSoak()
			for i, node := range tc.replicas {
				m := newPod(fmt.Sprintf("rejuv-healer-%d", i))
				node, deleting := strings.CutSuffix(node, " deleting")
				m.Spec.NodeName = node
				if deleting {
					now := m.CreationTimestamp
					m.DeletionTimestamp = &now
				}
				s.component(0, m)
			}
			p := newPod("web-0")
			s.pod(0, p)
			s.fault(5, 0, LoseNode, "node-2")
			s.faultEnded(40, 0)
			setInService(p, false)
			s.pod(10, p)
			setInService(p, true)
			s.pod(45, p)
			s.tick(100)
			rep := s.finish(120)
			expect(t, rep, HeldOutOfService, tc.want, "out of service (KruisePodReady False) with no request in flight")
		})
	}
}
