package invariant

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

func TestARestartWithNoRequestIsAViolation(t *testing.T) {
	s := newSoak()
	p := newPod("web-0")
	s.pod(0, p)
	restartContainer(p, "app")
	s.pod(10, p)
	rep := s.finish(60)
	expect(t, rep, OncePerDecision, 1, "restarted with no request")
	v := only(rep, OncePerDecision)[0]
	joined := strings.Join(v.Evidence, "\n")
	for _, want := range []string{"containerID web-0-app-0- -> web-0-app-1-", "restartCount 0 -> 1", "reason Error exitCode 137", "seen +10.0s"} {
		if !strings.Contains(joined, want) {
			t.Errorf("evidence lacks %q:\n%s", want, joined)
		}
	}
	if rep.Restarts != 1 {
		t.Errorf("restarts %d, want 1", rep.Restarts)
	}
}

func TestRestartsAreAttributedAcrossTheWatches(t *testing.T) {
	cases := []struct {
		name string
		// restart is when the container is seen restarted; the request
		// is seen at 10 and ends at 16.
		restart float64
		want    int
	}{
		{"while in flight", 13, 0},
		{"seen 3s before its request", 7, 0},
		{"seen 6s before its request", 4, 1},
		{"seen 4s after it ended", 20, 0},
		{"seen 10s after it ended", 26, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSoak()
			p := newPod("web-0")
			s.pod(0, p)
			r := newRequest("a", p, nil)
			s.request(10, r)
			restartContainer(p, "app")
			s.pod(tc.restart, p)
			r.Status.Phase = v1beta1.PhaseCompleted
			r.Status.Result = v1beta1.ResultFailed
			s.request(16, r)
			expect(t, s.finish(60), OncePerDecision, tc.want, "restarted with no request")
		})
	}
}

func TestARestartCountsOnlyForAContainerTheRequestLists(t *testing.T) {
	s := newSoak()
	p := newPod("web-0", "app", "proxy")
	s.pod(0, p)
	s.request(10, newRequest("a", p, nil, "app"))
	restartContainer(p, "proxy")
	s.pod(12, p)
	expect(t, s.finish(60), OncePerDecision, 1, "restarted with no request: container proxy")
}

func TestARequestThatRecreatesTwiceIsAViolation(t *testing.T) {
	cases := []struct {
		name    string
		restart func(s *soak, p *corev1.Pod)
	}{
		{"two observations", func(s *soak, p *corev1.Pod) {
			restartContainer(p, "app")
			s.pod(12, p)
			restartContainer(p, "app")
			s.pod(14, p)
		}},
		{"a count that grew by two", func(s *soak, p *corev1.Pod) {
			restartContainer(p, "app")
			restartContainer(p, "app")
			s.pod(12, p)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSoak()
			p := newPod("web-0")
			s.pod(0, p)
			r := newRequest("a", p, nil)
			s.request(10, r)
			tc.restart(s, p)
			complete(r, v1beta1.ResultSucceeded)
			s.request(16, r)
			rep := s.finish(60)
			expect(t, rep, OncePerDecision, 1, "recreated twice by one request")
			if rep.Restarts != 2 {
				t.Errorf("restarts %d, want 2", rep.Restarts)
			}
		})
	}
}

func TestBackToBackRequestsEachTakeTheirRestart(t *testing.T) {
	s := newSoak()
	p := newPod("web-0")
	s.pod(0, p)
	s.recreation(10, newRequest("a", p, nil), p, 6.5)
	// The next request is seen before the soak sees the first end, and
	// its restart within Slack.Attribution of the first's end.
	r := newRequest("b", p, nil)
	s.request(15.5, r)
	restartContainer(p, "app")
	s.pod(18, p)
	complete(r, v1beta1.ResultSucceeded)
	s.request(22, r)
	quiet(t, s.finish(60))
}

func TestAContainerIDChangeIsARestartAndAnEmptyOneIsNot(t *testing.T) {
	s := newSoak()
	p := newPod("web-0")
	s.pod(0, p)
	p.Status.ContainerStatuses[0].ContainerID = ""
	s.pod(5, p)
	p.Status.ContainerStatuses[0].ContainerID = containerID("web-0", "app", 0)
	s.pod(6, p)
	quiet(t, s.finish(20))

	s = newSoak()
	p = newPod("web-0")
	s.pod(0, p)
	p.Status.ContainerStatuses[0].ContainerID = containerID("web-0", "app", 7)
	s.pod(5, p)
	expect(t, s.finish(20), OncePerDecision, 1, "restarted with no request")
}

func TestAPodMadeAgainUnderItsNameIsNotARestart(t *testing.T) {
	s := newSoak()
	p := newPod("web-0")
	s.pod(0, p)
	s.podGone(5, p)
	again := newPod("web-0")
	again.UID = "pod-web-0-again"
	s.pod(6, again)
	quiet(t, s.finish(20))
}

func TestRestartsOnALostNodeAreTheFaults(t *testing.T) {
	s := newSoak()
	p := newPod("web-0")
	s.pod(0, p)
	s.fault(5, 1, LoseNode, "node-1")
	s.faultEnded(30, 1)
	restartContainer(p, "app")
	s.pod(40, p)
	quiet(t, s.finish(60))
}

// TestARestartSeenLateOnASilentNodeIsTheRequests: the daemon stopped the
// container while the node's kubelet was paused; the request ended
// before the kubelet, continued, started the new instance. The restart is
// the ended request's, not one without a request; without the pause it
// would be.
func TestARestartSeenLateOnASilentNodeIsTheRequests(t *testing.T) {
	for _, paused := range []bool{true, false} {
		s := newSoak()
		p := newPod("web-0", "app")
		s.pod(0, p)
		if paused {
			s.fault(5, 1, PauseKubelet, "node-1")
		}
		r := newRequest("a", p, nil, "app")
		s.request(10, r)
		complete(r, "Failed")
		s.request(20, r)
		if paused {
			s.faultEnded(38, 1)
		}
		restartContainer(p, "app")
		s.pod(40, p)
		rep := s.finish(60)
		want := 0
		if !paused {
			want = 1
		}
		expect(t, rep, OncePerDecision, want, "restarted with no request")
	}
}

// TestAStartTriedAgainIsNotASecondRecreation: the request's new instance
// fails to start (the kubelet restarted as it started it), and the kubelet
// starts another: the container restarted twice, but only once for the
// request. An instance that ran and is then replaced again is a second
// recreation. Seen in the soak (seed 8): three requests at once, their
// node's kubelet restarted right after it came back from a pause.
func TestAStartTriedAgainIsNotASecondRecreation(t *testing.T) {
	for _, tc := range []struct {
		name string
		// seen sets the state the request's instance is seen in, and the
		// last state the next one reports.
		seen func(s *corev1.ContainerStatus)
		want int
	}{
		{"seen waiting", func(s *corev1.ContainerStatus) {
			s.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
		}, 0},
		{"seen ended by a start error", func(s *corev1.ContainerStatus) {
			s.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "StartError", ExitCode: 128}}
		}, 0},
		{"seen running", func(s *corev1.ContainerStatus) {
			s.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
		}, 1},
		{"not seen, its start error reported by the next", func(*corev1.ContainerStatus) {}, 0},
		{"seen waiting, then running", func(s *corev1.ContainerStatus) {
			s.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSoak()
			p := newPod("web-0")
			s.pod(0, p)
			r := newRequest("a", p, nil)
			s.request(10, r)
			restartContainer(p, "app")
			tc.seen(&p.Status.ContainerStatuses[0])
			s.pod(12, p)
			if tc.name == "seen waiting, then running" {
				p.Status.ContainerStatuses[0].State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
				s.pod(13, p)
			}
			restartContainer(p, "app")
			p.Status.ContainerStatuses[0].State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
			if tc.name == "not seen, its start error reported by the next" {
				p.Status.ContainerStatuses[0].LastTerminationState.Terminated.Reason = "StartError"
			}
			s.pod(14, p)
			complete(r, v1beta1.ResultSucceeded)
			s.request(16, r)
			expect(t, s.finish(60), OncePerDecision, tc.want, "recreated twice by one request")
		})
	}
}

// TestALateRestartGoesToTheRequestEndedWhileTheNodeWasSilent: a request
// failed while its node's kubelet was paused, after its daemon stopped
// the container; the next request for the pod was made as the kubelet
// came back and reported the stop's new instance; then the next request
// recreated the container itself. Each request restarted it once (seen
// in the soak, seed 9, when requests under way were put first).
func TestALateRestartGoesToTheRequestEndedWhileTheNodeWasSilent(t *testing.T) {
	s := newSoak()
	p := newPod("web-0", "app")
	s.pod(0, p)
	s.fault(300, 1, PauseKubelet, "node-1")
	failed := newRequest("a", p, nil, "app")
	s.request(310, failed)
	complete(failed, "Failed")
	s.request(330, failed)
	s.faultEnded(358, 1)
	next := newRequest("b", p, nil, "app")
	s.request(361.6, next)
	restartContainer(p, "app")
	s.pod(362.2, p)
	restartContainer(p, "app")
	s.pod(381.3, p)
	complete(next, "Succeeded")
	s.request(381.4, next)
	quiet(t, s.finish(420))
}

// TestTheLostNodesRestartAfterTheRequestsIsTheFaults: seed 12's hour. The
// daemon stopped the container, the kubelet started the next instance as
// the node was lost, which ended it; once the node was back the kubelet
// reported both restarts, after the request had ended for the lost node.
// The second is the node's, not the request's; without the node's loss it
// is the request's second.
func TestTheLostNodesRestartAfterTheRequestsIsTheFaults(t *testing.T) {
	for _, lost := range []bool{true, false} {
		s := newSoak()
		p := newPod("web-0", "app")
		s.pod(0, p)
		r := newRequest("a", p, nil, "app")
		s.request(10, r)
		if lost {
			s.fault(12, 1, LoseNode, "node-1")
		}
		complete(r, "Failed")
		s.request(80, r)
		if lost {
			s.faultEnded(82, 1)
		}
		restartContainer(p, "app")
		s.pod(83.6, p)
		restartContainer(p, "app")
		s.pod(84, p)
		want := 0
		if !lost {
			want = 1
		}
		expect(t, s.finish(120), OncePerDecision, want, "recreated twice by one request")
	}
}

// TestAnInstanceReportedAgainIsNotARestart: seed 12's hour. A pod being
// deleted right after its recreation: the kubelet's last report named the
// instance the request had replaced (restartCount unchanged). An instance
// does not come back: no restart, and the latest stays the latest.
func TestAnInstanceReportedAgainIsNotARestart(t *testing.T) {
	s := newSoak()
	p := newPod("web-0", "app")
	s.pod(0, p)
	s.recreation(10, newRequest("a", p, nil, "app"), p, 6)
	back := p.DeepCopy()
	back.Status.ContainerStatuses[0].ContainerID = containerID("web-0", "app", 0)
	s.pod(30, back)
	s.pod(31, p)
	restartContainer(p, "app")
	s.pod(40, p)
	rep := s.finish(60)
	expect(t, rep, OncePerDecision, 1, "restarted with no request")
	v := only(rep, OncePerDecision)[0]
	if joined := strings.Join(v.Evidence, "\n"); !strings.Contains(joined, "containerID web-0-app-1- -> web-0-app-2-") {
		t.Errorf("the restart at +40s is not from the latest instance:\n%s", joined)
	}
}

// TestAStartTheNodesLossCutShortIsNotASecondRecreation: seed 42's cold
// make test, +242.3 s. The daemon stopped the container for the request
// (+101.3 s) while the kubelet held its restart in the crash-loop
// back-off; the kubelet was paused (+107.1 s to +172.4 s), created the
// next instance as it came back, and was stopped with its node (+172.8 s)
// before it started it. Once the node was back (+240.1 s) the kubelet
// started another instance and reported both restarts at once, the
// instance it created and never started as the new one's last state
// (waiting, no reason): one recreation by the request, and a start tried
// again. Where the instance in between ran (its last state terminated),
// the request recreated the container twice.
func TestAStartTheNodesLossCutShortIsNotASecondRecreation(t *testing.T) {
	for _, tc := range []struct {
		name  string
		last  corev1.ContainerState
		want  int
		twice bool
	}{
		{"the instance between never started", corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{}}, 0, false},
		{"the instance between failed to start", corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "StartError", ExitCode: 128}}, 0, false},
		{"the instance between ran", corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 137}}, 1, false},
		{"the instance between never started, after one seen", corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{}}, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSoak()
			p := newPod("web-0", "app")
			s.pod(0, p)
			r := newRequest("a", p, nil, "app")
			s.request(96.9, r)
			if tc.twice {
				// A restart of its own seen before: the one that follows
				// is a second, whatever the start tried again.
				restartContainer(p, "app")
				s.pod(101.4, p)
			}
			s.fault(107.1, 1, PauseKubelet, "node-1")
			s.faultEnded(172.4, 1)
			s.fault(172.8, 2, LoseNode, "node-1")
			complete(r, "Failed")
			s.request(192.5, r)
			s.faultEnded(240.1, 2)
			cs := &p.Status.ContainerStatuses[0]
			cs.RestartCount += 2
			cs.ContainerID = containerID(p.Name, "app", cs.RestartCount)
			cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
			cs.LastTerminationState = tc.last
			s.pod(242.3, p)
			rep := s.finish(300)
			expect(t, rep, OncePerDecision, tc.want, "recreated twice by one request")
			restarts := 2
			if tc.twice {
				restarts = 3
			}
			if rep.Restarts != restarts {
				t.Errorf("restarts %d, want %d", rep.Restarts, restarts)
			}
		})
	}
}
