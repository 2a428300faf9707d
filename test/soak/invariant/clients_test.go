package invariant

import (
	"testing"
)

func TestClientFailuresAreExplainedByTrafficFaults(t *testing.T) {
	cases := []struct {
		name string
		// failures are when shop/web's clients fail; a KillDaemon fault
		// runs from 10 to 20 and a RestartAPIServer one from 15 to 30.
		failures  []float64
		want      int
		explained map[Fault]int
	}{
		{"during a fault", []float64{12}, 0, map[Fault]int{KillDaemon: 1}},
		{"during two faults, the earliest", []float64{17}, 0, map[Fault]int{KillDaemon: 1}},
		{"just after a fault", []float64{24}, 0, map[Fault]int{KillDaemon: 1}},
		{"after every fault", []float64{40}, 1, map[Fault]int{}},
		{"before any fault", []float64{5}, 1, map[Fault]int{}},
		{"a burst is one violation", []float64{40, 40.5, 41.2, 43}, 2, map[Fault]int{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSoak(KillDaemon)
			s.fault(10, 1, KillDaemon, "rejuv-daemon-x")
			s.fault(15, 2, RestartAPIServer, "control-plane")
			s.faultEnded(20, 1)
			s.faultEnded(30, 2)
			for _, f := range tc.failures {
				s.clientFailed(f, "shop/web")
			}
			rep := s.finish(60)
			expect(t, rep, ClientRequests, tc.want, "")
			if rep.ClientFailures != len(tc.failures) {
				t.Errorf("client failures %d, want %d", rep.ClientFailures, len(tc.failures))
			}
			for _, kind := range Faults {
				if rep.Explained[kind] != tc.explained[kind] {
					t.Errorf("explained by %s: %d, want %d", kind, rep.Explained[kind], tc.explained[kind])
				}
			}
		})
	}
}

func TestABurstOfFailuresSaysHowMany(t *testing.T) {
	s := newSoak()
	for _, f := range []float64{40, 40.5, 41.2} {
		s.clientFailed(f, "shop/web")
	}
	s.clientFailed(40.7, "shop/api")
	rep := s.finish(60)
	expect(t, rep, ClientRequests, 2, "")
	for _, v := range rep.Violations {
		if v.Subject == "service shop/web" && (v.What != "3 client requests failed within 1.2s with no fault under way to explain them" || len(v.Evidence) != 3) {
			t.Errorf("burst reported as %q with %d lines of evidence", v.What, len(v.Evidence))
		}
	}
}

// TestAFaultOnANodeExplainsOnlyItsServices: a node's kubelet paused past
// the node grace takes the node's pods out of their Services; it explains
// the failures of a Service with a pod on that node, not of one without.
func TestAFaultOnANodeExplainsOnlyItsServices(t *testing.T) {
	s := newSoak(PauseKubelet)
	s.pod(1, newPod("web-1"))
	s.fault(10, 1, PauseKubelet, "node-1")
	s.clientFailed(65, "shop/web")
	s.clientFailed(66, "bank/web")
	s.faultEnded(70, 1)
	rep := s.finish(100)
	expect(t, rep, ClientRequests, 1, "")
	if v := only(rep, ClientRequests)[0]; v.Subject != "service bank/web" {
		t.Errorf("violation for %s, want bank/web's failure", v.Subject)
	}
	if rep.Explained[PauseKubelet] != 1 {
		t.Errorf("explained by %s: %d, want shop/web's one failure", PauseKubelet, rep.Explained[PauseKubelet])
	}
}

// Seed 10's 10-minute run, +603.9 s: node-2 was lost for 85 s; its pods
// were Ready again 14 s after it came back, and their Service's clients
// failed in between.
func TestANodeFaultExplainsFailuresUntilItsPodsAreReadyAgain(t *testing.T) {
	s := newSoak(LoseNode)
	web := newPod("web-1")
	s.pod(1, web)
	other := newPod("web-1")
	other.Namespace, other.UID = "bank", "pod-bank-web-1"
	s.pod(1, other)
	s.fault(10, 1, LoseNode, "node-1")
	setReady(web, false)
	s.pod(50, web)
	s.faultEnded(100, 1)
	s.clientFailed(110, "shop/web")
	setReady(web, true)
	s.pod(114, web)
	s.clientFailed(118, "shop/web")
	s.clientFailed(125, "shop/web")
	s.clientFailed(110, "bank/web")
	rep := s.finish(200)
	got := only(rep, ClientRequests)
	if len(got) != 2 {
		t.Fatalf("violations %s, want the failure 11 s after shop/web's pod was Ready again and bank/web's (its pod never stopped being Ready)", dump(rep))
	}
	if rep.Explained[LoseNode] != 2 {
		t.Errorf("explained by %s: %d, want the two failures while shop/web's pod was not Ready again or just after", LoseNode, rep.Explained[LoseNode])
	}
}

// Seed 13's hour, +2251.6 s: kube-apiserver restarted from +2231.9 to
// +2237.3 s; soak-hand/web's pod, taken out of service by a request by
// hand, was first seen not Ready at +2244.4 s (the soak's own watch back
// from its back-off), its container stopped after the unready grace, and
// kube-proxy, its watch not back either, still sent it new connections:
// 49 refused from +2251.6 to +2262.3 s, until its next instance answered.
// The restart explains them, as it does soak-rules/stuck's one at
// +2255.7 s; not those of a Service whose pods all stayed Ready, nor
// those long after.
func TestAnAPIServerRestartExplainsFailuresWhileEndpointsLag(t *testing.T) {
	s := newSoak(RestartAPIServer)
	web := newPod("web-1")
	s.pod(1, web)
	other := newPod("web-1")
	other.Namespace, other.UID = "bank", "pod-bank-web-1"
	s.pod(1, other)
	gone := newPod("web-1")
	gone.Namespace, gone.UID = "late", "pod-late-web-1"
	s.pod(1, gone)
	s.fault(10, 1, RestartAPIServer, "kube-apiserver")
	s.faultEnded(15.4, 1)
	setReady(web, false)
	s.pod(22.5, web)
	s.clientFailed(29.7, "shop/web")
	s.clientFailed(40.4, "shop/web")
	s.clientFailed(29.7, "bank/web")
	setReady(web, true)
	s.pod(43.1, web)
	s.clientFailed(46, "shop/web")
	setReady(gone, false)
	s.pod(100, gone)
	s.clientFailed(101, "late/web")
	rep := s.finish(200)
	got := only(rep, ClientRequests)
	if len(got) != 2 {
		t.Fatalf("violations %s, want bank/web's (its pod stayed Ready) and late/web's (the restart ended 85 s before)", dump(rep))
	}
	for _, v := range got {
		if v.Subject != "service bank/web" && v.Subject != "service late/web" {
			t.Errorf("violation for %s", v.Subject)
		}
	}
	if rep.Explained[RestartAPIServer] != 3 {
		t.Errorf("explained by %s: %d, want shop/web's three failures", RestartAPIServer, rep.Explained[RestartAPIServer])
	}
}
