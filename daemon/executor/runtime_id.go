package executor

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// containerSpec returns the pod's container (regular or native sidecar).
func containerSpec(pod *corev1.Pod, name string) *corev1.Container {
	for _, list := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

// runtimeID strips the runtime prefix: "containerd://abc" is "abc".
func runtimeID(containerID string) string {
	if _, id, ok := strings.Cut(containerID, "://"); ok {
		return id
	}
	return containerID
}
