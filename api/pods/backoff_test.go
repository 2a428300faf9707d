package pods

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestBackOffAhead(t *testing.T) {
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	ended := func(restarts int32, ran time.Duration) *corev1.ContainerStatus {
		return &corev1.ContainerStatus{RestartCount: restarts, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			StartedAt: metav1.NewTime(at), FinishedAt: metav1.NewTime(at.Add(ran)),
		}}}
	}
	for _, tc := range []struct {
		name string
		cs   *corev1.ContainerStatus
		want bool
	}{
		{"the first instance, stopped at once: the kubelet's first restart is never delayed", ended(0, time.Second), false},
		{"a restart that ran 2 minutes", ended(1, 2*time.Minute), true},
		{"a restart that ran 11 minutes: the window has passed", ended(3, 11*time.Minute), false},
		{"still running", &corev1.ContainerStatus{RestartCount: 2, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}, false},
		{"no status", nil, false},
	} {
		if _, got := BackOffAhead(tc.cs); got != tc.want {
			t.Errorf("%s: %t, want %t", tc.name, got, tc.want)
		}
	}
}
