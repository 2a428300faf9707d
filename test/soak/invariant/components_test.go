package invariant

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// newComponent is one of Rejuv's pods, running on node.
func newComponent(name, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "rejuv-system", Name: name, UID: types.UID("pod-" + name)},
		Spec:       corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
			{Name: "main", ContainerID: containerID(name, "main", 0)}}},
	}
}

// crash restarts p's container as kill -9 would.
func crash(p *corev1.Pod) {
	s := &p.Status.ContainerStatuses[0]
	s.RestartCount++
	s.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 137}
	s.ContainerID = containerID(p.Name, "main", s.RestartCount)
}

func TestComponentRestartsAreExplainedByFaults(t *testing.T) {
	type fault struct {
		kind     Fault
		target   string
		from, to float64
	}
	cases := []struct {
		name string
		// pod restarts at restart.
		pod     string
		fault   *fault
		restart float64
		want    int
	}{
		{"a manager, nothing injected", "rejuv-healer-abc-1", nil, 50, 1},
		{"a manager, killed as the leader", "rejuv-healer-abc-1", &fault{KillLeader, "rejuv-healer-abc-1", 45, 48}, 50, 0},
		{"a manager, killed as the standby a minute ago", "rejuv-healer-abc-1", &fault{KillStandby, "rejuv-healer-abc-1", 5, 10}, 50, 0},
		{"a manager, killed as the standby long ago", "rejuv-healer-abc-1", &fault{KillStandby, "rejuv-healer-abc-1", 5, 9}, 80, 1},
		{"a manager, the other replica killed", "rejuv-healer-abc-1", &fault{KillLeader, "rejuv-healer-abc-2", 45, 48}, 50, 1},
		{"a manager, the API slow", "rejuv-healer-abc-1", &fault{SlowAPI, "kube-apiserver", 20, 40}, 50, 0},
		{"a manager, a daemon killed", "rejuv-healer-abc-1", &fault{KillDaemon, "rejuv-daemon-x", 45, 48}, 50, 1},
		{"a daemon, killed", "rejuv-daemon-x", &fault{KillDaemon, "rejuv-daemon-x", 45, 48}, 50, 0},
		{"a daemon, killed by namespace/name", "rejuv-daemon-x", &fault{KillDaemon, "rejuv-system/rejuv-daemon-x", 45, 48}, 50, 0},
		{"a daemon, another killed", "rejuv-daemon-x", &fault{KillDaemon, "rejuv-daemon-y", 45, 48}, 50, 1},
		{"a daemon, the leader killed", "rejuv-daemon-x", &fault{KillLeader, "rejuv-healer-abc-2", 45, 48}, 50, 1},
		{"a daemon, its node lost", "rejuv-daemon-x", &fault{LoseNode, "node-1", 30, 45}, 50, 0},
		{"a daemon, another node lost", "rejuv-daemon-x", &fault{LoseNode, "node-2", 30, 45}, 50, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSoak()
			p := newComponent(tc.pod, "node-1")
			s.component(0, p)
			if f := tc.fault; f != nil {
				s.fault(f.from, 1, f.kind, f.target)
				s.faultEnded(f.to, 1)
			}
			crash(p)
			s.component(tc.restart, p)
			rep := s.finish(100)
			expect(t, rep, Components, tc.want, "container main restarted with no fault to explain it")
			if tc.want > 0 {
				joined := strings.Join(only(rep, Components)[0].Evidence, "\n")
				for _, want := range []string{"uid pod-" + tc.pod, "restartCount 0 -> 1", "reason Error exitCode 137"} {
					if !strings.Contains(joined, want) {
						t.Errorf("evidence lacks %q:\n%s", want, joined)
					}
				}
			}
		})
	}
}

func TestComponentsComeAndGoWithFaults(t *testing.T) {
	type fault struct {
		kind   Fault
		target string
	}
	cases := []struct {
		name string
		// gone leaves at 50 and arrives comes at 55, during fault (from
		// 40 to 60) when set.
		gone, arrives string
		fault         *fault
		want          int
	}{
		{"a manager replaced, nothing injected", "rejuv-healer-abc-1", "rejuv-healer-def-1", nil, 2},
		{"a manager rolled out", "rejuv-healer-abc-1", "rejuv-healer-def-1", &fault{RolloutManager, "deployment/rejuv-healer"}, 0},
		{"a daemon replaced while the manager rolled out", "rejuv-daemon-x", "rejuv-daemon-z", &fault{RolloutManager, "deployment/rejuv-healer"}, 2},
		{"a daemon rolled out", "rejuv-daemon-x", "rejuv-daemon-z", &fault{RolloutDaemon, "daemonset/rejuv-daemon"}, 0},
		{"a daemon's node lost", "rejuv-daemon-x", "rejuv-daemon-z", &fault{LoseNode, "node-1"}, 0},
		{"another node lost", "rejuv-daemon-x", "rejuv-daemon-z", &fault{LoseNode, "node-2"}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSoak()
			old := newComponent(tc.gone, "node-1")
			s.component(0, old)
			s.component(0.5, newComponent("rejuv-daemon-y", "node-2"))
			if f := tc.fault; f != nil {
				s.fault(40, 1, f.kind, f.target)
				s.faultEnded(60, 1)
			}
			s.componentGone(50, old)
			s.component(55, newComponent(tc.arrives, ""))
			expect(t, s.finish(100), Components, tc.want, "with no fault to explain it")
		})
	}
}

func TestOtherPodsAreNotComponents(t *testing.T) {
	s := newSoak()
	p := newComponent("prometheus-0", "node-1")
	s.component(0, p)
	crash(p)
	s.component(50, p)
	s.componentGone(60, p)
	quiet(t, s.finish(100))
}

// TestAComponentDeletedInARolloutMayGoLate: a rollout deletes the old
// replica, whose node's kubelet is silenced before it stops it; the pod
// goes long after the rollout ended, and is explained by the rollout that
// asked for its deletion (seen in the soak, seed 5: gone 66 s after the
// rollout). A pod deleted with no fault under way is not.
func TestAComponentDeletedInARolloutMayGoLate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rollout bool
		want    int
	}{{"deleted by a rollout", true, 0}, {"deleted with no fault", false, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSoak()
			old := newComponent("rejuv-healer-abc-1", "node-2")
			s.component(0, old)
			if tc.rollout {
				s.fault(40, 1, RolloutManager, "deployment/rejuv-healer")
				s.faultEnded(60, 1)
			}
			deleting := old.DeepCopy()
			deleting.DeletionTimestamp = &metav1.Time{Time: at(59)}
			s.component(59, deleting)
			s.componentGone(140, deleting)
			rep := s.finish(200)
			expect(t, rep, Components, tc.want, "manager pod gone with no fault to explain it")
			if tc.want > 0 {
				if joined := strings.Join(only(rep, Components)[0].Evidence, "\n"); !strings.Contains(joined, "deletion seen +59.0s") {
					t.Errorf("evidence lacks when its deletion was seen:\n%s", joined)
				}
			}
		})
	}
}
