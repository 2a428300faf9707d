package executor

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// TestSnapshotHoldsTheNewInstancesOnly: status.containerStatusSnapshot
// lists the containers that run an instance newer than the one the request
// was admitted with, once this request stopped them or they succeeded:
// not a container still running its old instance (the kubelet has not
// reported the new one), not one not yet stopped, not one not running.
func TestSnapshotHoldsTheNewInstancesOnly(t *testing.T) {
	crr := &v1beta1.ContainerRecreateRequest{}
	pod := &corev1.Pod{}
	st := &v1beta1.ContainerRecreateRequestStatus{}
	add := func(name, admitted, reported string, running bool, state v1beta1.ContainerRecreateRequestContainerRecreateState) {
		crr.Spec.Containers = append(crr.Spec.Containers, v1beta1.ContainerRecreateRequestContainer{Name: name,
			StatusContext: &v1beta1.ContainerRecreateRequestContainerContext{ContainerID: admitted}})
		cs := corev1.ContainerStatus{Name: name, ContainerID: reported, RestartCount: 1, Ready: true}
		if running {
			cs.State.Running = &corev1.ContainerStateRunning{}
		}
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, cs)
		state.Name = name
		st.ContainerRecreateStates = append(st.ContainerRecreateStates, state)
	}
	killed := v1beta1.ContainerRecreateRequestContainerRecreateState{Phase: v1beta1.PhaseRecreating, IsKilled: true}
	add("restarted", "c://a", "c://b", true, killed)
	add("succeeded", "c://c", "c://d", true, v1beta1.ContainerRecreateRequestContainerRecreateState{Phase: v1beta1.PhaseSucceeded})
	add("not-reported-yet", "c://e", "c://e", true, killed)
	add("not-stopped-yet", "c://f", "c://g", true, v1beta1.ContainerRecreateRequestContainerRecreateState{Phase: v1beta1.PhasePending})
	add("waiting", "c://h", "c://i", false, killed)
	got := snapshot(crr, pod, st)
	if len(got) != 2 || got[0].Name != "restarted" || got[0].ContainerID != "c://b" || !got[0].Ready || got[0].RestartCount != 1 || got[1].Name != "succeeded" {
		t.Errorf("snapshot %+v; want restarted (c://b, ready, restart 1) and succeeded", got)
	}
}
