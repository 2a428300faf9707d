package crr

import (
	"testing"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// TestEndSaysTheKubeletsBackOff: a request ended while the kubelet held a
// container's restart in its back-off says that the back-off, not Rejuv,
// made it slow; the other containers keep their state or get the reason.
func TestEndSaysTheKubeletsBackOff(t *testing.T) {
	crr := &v1beta1.ContainerRecreateRequest{
		Spec: v1beta1.ContainerRecreateRequestSpec{Containers: []v1beta1.ContainerRecreateRequestContainer{{Name: "app"}, {Name: "side"}, {Name: "log"}}},
		Status: v1beta1.ContainerRecreateRequestStatus{ContainerRecreateStates: []v1beta1.ContainerRecreateRequestContainerRecreateState{
			{Name: "app", Phase: v1beta1.PhaseRecreating, IsKilled: true, Message: v1beta1.BackOffMessage + "back-off 5m0s restarting failed container=app pod=web_shop(u1)"},
			{Name: "side", Phase: v1beta1.PhaseSucceeded},
		}},
	}
	got := finalStates(crr, "activeDeadlineSeconds (300s) passed")
	want := []string{
		"not recreated: activeDeadlineSeconds (300s) passed while the kubelet held the restart in its crash-loop back-off (back-off 5m0s restarting failed container=app pod=web_shop(u1))",
		"",
		"not recreated: activeDeadlineSeconds (300s) passed",
	}
	for i, s := range got {
		if s.Message != want[i] {
			t.Errorf("container %s: message %q, want %q", s.Name, s.Message, want[i])
		}
	}
	if got[0].Phase != v1beta1.PhaseFailed || got[1].Phase != v1beta1.PhaseSucceeded || got[2].Phase != v1beta1.PhaseFailed {
		t.Errorf("phases %s %s %s, want Failed Succeeded Failed", got[0].Phase, got[1].Phase, got[2].Phase)
	}
}
