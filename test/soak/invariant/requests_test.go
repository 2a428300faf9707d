package invariant

import (
	"testing"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

func TestRunSecond(t *testing.T) {
	cases := []struct {
		run  string
		want int64
		ok   bool
	}{
		{"2025-03-01T12:00:10Z", at(10).Unix(), true},
		{"2025-03-01T13:00:10+01:00", at(10).Unix(), true},
		{"", 0, false},
		{"yesterday", 0, false},
	}
	for _, tc := range cases {
		got, ok := runSecond(tc.run)
		if got != tc.want || ok != tc.ok {
			t.Errorf("runSecond(%q) = %d, %t, want %d, %t", tc.run, got, ok, tc.want, tc.ok)
		}
	}
}

func TestTerminalPhase(t *testing.T) {
	cases := map[v1beta1.ContainerRecreateRequestPhase]bool{
		"": false, v1beta1.PhasePending: false, v1beta1.PhaseRecreating: false,
		v1beta1.PhaseCompleted: true, v1beta1.PhaseSucceeded: true, v1beta1.PhaseFailed: true,
	}
	for phase, want := range cases {
		if got := terminalPhase(phase); got != want {
			t.Errorf("terminalPhase(%q) = %t, want %t", phase, got, want)
		}
	}
}

func TestARequestWithoutPodUIDFindsItsPodByName(t *testing.T) {
	s := newSoak()
	p := newPod("web-0")
	s.pod(0, p)
	r := newRequest("a", p, nil)
	delete(r.Labels, v1beta1.PodUIDLabel)
	s.request(10, r)
	restartContainer(p, "app")
	s.pod(12, p)
	complete(r, v1beta1.ResultSucceeded)
	s.request(16, r)
	rep := s.finish(60)
	quiet(t, rep)
	if rep.Requests != 1 || rep.Succeeded != 1 {
		t.Errorf("requests %d succeeded %d, want 1 and 1", rep.Requests, rep.Succeeded)
	}
}

func TestARequestOfAnotherPodOfTheSameNameIsNotThisPods(t *testing.T) {
	s := newSoak()
	old := newPod("web-0")
	s.pod(0, old)
	s.podGone(5, old)
	p := newPod("web-0")
	p.UID = "pod-web-0-again"
	s.pod(6, p)
	s.request(10, newRequest("a", old, nil)) // for the pod that went
	restartContainer(p, "app")
	s.pod(12, p)
	expect(t, s.finish(60), OncePerDecision, 1, "restarted with no request")
}
