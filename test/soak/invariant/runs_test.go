package invariant

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// completed sets pol's latest run: scheduled at run, Completed with
// recreated pods.
func completed(pol *v1alpha1.RecreatePolicy, run float64, recreated int32) *v1alpha1.RecreatePolicy {
	pol.Status.Run = &v1alpha1.Run{ScheduledTime: metav1.NewTime(at(run)), State: v1alpha1.RunCompleted, Pods: 4, Recreated: recreated}
	return pol
}

func TestARunReportsWhatWasSeen(t *testing.T) {
	cases := []struct {
		name string
		// reported is the run's recreated count, seen at seen; the soak
		// restarts four pods, the last at 31.
		reported int32
		seen     float64
		gone     bool
		want     int
	}{
		{"as many", 4, 40, false, 0},
		{"seen before the last restart", 4, 30, false, 0},
		{"one too few", 3, 40, false, 1},
		{"one too many", 5, 40, false, 1},
		{"a recreated pod deleted before, still counted", 4, 45, true, 0},
		{"a recreated pod deleted before, left out", 3, 45, true, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSoak()
			pol := newPolicy("nightly", "1")
			rollingRun(s, pol, 10, 6.2)
			if tc.gone {
				s.podGone(42, newPod(podName(0)))
			}
			s.policy(tc.seen, completed(pol, 10, tc.reported))
			s.policy(tc.seen+10, pol) // seen again: checked once
			rep := s.finish(120)
			expect(t, rep, RunReports, tc.want, "pods recreated")
			if rep.RunsCompleted != 1 {
				t.Errorf("runs completed %d, want 1", rep.RunsCompleted)
			}
		})
	}
}

func TestARunComparesToTheSecond(t *testing.T) {
	s := newSoak()
	pol := newPolicy("nightly", "1")
	rollingRun(s, pol, 10, 6.2)
	s.policy(40, completed(pol, 10.4, 4))
	quiet(t, s.finish(60))
}

// TestARunCountsOnlyItsSucceededRequests: a pod whose run request
// restarted its container and then failed (the pod was being deleted) is
// not one the run reports recreated.
func TestARunCountsOnlyItsSucceededRequests(t *testing.T) {
	s := newSoak()
	pol := newPolicy("nightly", "1")
	pods := s.selected(pol, 2)
	s.recreation(10, inRun(newRequest("run-a", pods[0], pol), at(10)), pods[0], 8)
	failed := inRun(newRequest("run-b", pods[1], pol), at(10))
	s.request(20, failed)
	restartContainer(pods[1], "app")
	s.pod(23, pods[1])
	complete(failed, "Failed")
	s.request(24, failed)
	s.policy(30, completed(pol, 10, 1))
	expect(t, s.finish(60), RunReports, 0, "")
}

// TestARestartIsTheRequestUnderWayNotOneEndedBeforeASilence: a run's
// request for a pod is under way when the pod restarts, just after its
// node's kubelet was paused; an earlier request for the pod had failed
// long before the pause. The restart is the run's, which reports it (seen
// in the soak, seed 6: the restart went to the failed request, and the
// run's report looked one too many).
func TestARestartIsTheRequestUnderWayNotOneEndedBeforeASilence(t *testing.T) {
	s := newSoak()
	pol := newPolicy("nightly", "1")
	pods := s.selected(pol, 1)
	earlier := inRun(newRequest("run-early", pods[0], pol), at(1))
	s.request(2, earlier)
	complete(earlier, "Failed")
	s.request(3, earlier)
	s.fault(40, 1, PauseKubelet, "node-1")
	s.faultEnded(95, 1)
	now := inRun(newRequest("run-now", pods[0], pol), at(90))
	s.request(90, now)
	restartContainer(pods[0], "app")
	s.pod(98, pods[0])
	complete(now, "Succeeded")
	s.request(98.5, now)
	s.policy(99, completed(pol, 90, 1))
	expect(t, s.finish(130), RunReports, 0, "")
}

// TestARestartGoesToTheRequestThatReportsItsInstance: seed 11's hour at
// +545 s. A request by hand ended (its deadline) while its node was lost;
// the node came back and the run's request for the same pod was made; the
// container's new instance was seen before the run's request ended, and
// went to the earlier request, ended while its node was silent. The run's
// request then ended Succeeded, its status snapshot naming that very
// instance (started after it was admitted): the restart is the run's, and
// the run's report of one pod recreated holds.
func TestARestartGoesToTheRequestThatReportsItsInstance(t *testing.T) {
	s := newSoak()
	pol := newPolicy("restart", "1")
	pods := s.selected(pol, 1)
	byHand := newRequest("by-hand", pods[0], nil)
	s.request(2, byHand)
	s.fault(3, 1, LoseNode, "node-1")
	complete(byHand, "Failed")
	s.request(60, byHand)
	s.faultEnded(72, 1)
	run := inRun(newRequest("run", pods[0], pol), at(75))
	s.request(75, run)
	restartContainer(pods[0], "app")
	s.pod(76.6, pods[0])
	complete(run, "Succeeded")
	run.Status.ContainerRecreateStates[0].IsKilled = true
	run.Status.ContainerStatusSnapshot = []v1beta1.ContainerRecreateRequestSyncContainerStatus{{Name: "app", RestartCount: 1, ContainerID: pods[0].Status.ContainerStatuses[0].ContainerID}}
	s.request(81, run)
	s.policy(107, completed(pol, 75, 1))
	rep := s.finish(140)
	expect(t, rep, RunReports, 0, "")
	expect(t, rep, OncePerDecision, 0, "")
	expect(t, rep, StatusMatches, 0, "")
}
