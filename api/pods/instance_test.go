package pods

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestInstance(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   corev1.ContainerStatus
		want string
	}{
		{"containerd", corev1.ContainerStatus{ContainerID: "containerd://4f2a9c1b7d3e5a6b7c8d9e0f", RestartCount: 3}, "3/4f2a9c1b7d3e"},
		{"cri-o", corev1.ContainerStatus{ContainerID: "cri-o://abc", RestartCount: 0}, "0/abc"},
		{"not created yet", corev1.ContainerStatus{}, "0/-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Instance(&tc.st); got != tc.want {
				t.Fatalf("Instance = %q, want %q", got, tc.want)
			}
		})
	}
	// The kubelet's restart changes both; either alone tells the
	// instances apart.
	before := Instance(&corev1.ContainerStatus{ContainerID: "containerd://aaaaaaaaaaaaaaaa", RestartCount: 1})
	for _, after := range []corev1.ContainerStatus{
		{ContainerID: "containerd://bbbbbbbbbbbbbbbb", RestartCount: 1},
		{ContainerID: "containerd://aaaaaaaaaaaaaaaa", RestartCount: 2},
	} {
		if Instance(&after) == before {
			t.Fatalf("%+v has the instance %q of the container before it", after, before)
		}
	}
}
