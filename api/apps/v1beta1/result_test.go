package v1beta1

import "testing"

func TestResultOf(t *testing.T) {
	s := func(phases ...ContainerRecreateRequestPhase) []ContainerRecreateRequestContainerRecreateState {
		var out []ContainerRecreateRequestContainerRecreateState
		for _, p := range phases {
			out = append(out, ContainerRecreateRequestContainerRecreateState{Phase: p})
		}
		return out
	}
	tests := []struct {
		states []ContainerRecreateRequestContainerRecreateState
		want   ContainerRecreateRequestResult
	}{
		{nil, ""},
		{s(PhaseSucceeded, PhaseSucceeded), ResultSucceeded},
		{s(PhaseFailed), ResultFailed},
		{s(PhaseFailed, PhasePending), ResultFailed},
		{s(PhaseSucceeded, PhaseFailed), ResultPartiallySucceeded},
	}
	for _, tt := range tests {
		if got := ResultOf(tt.states); got != tt.want {
			t.Errorf("ResultOf(%v) = %q, want %q", tt.states, got, tt.want)
		}
	}
}
