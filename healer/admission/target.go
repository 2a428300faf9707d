package admission

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/rejuv-dev/rejuv/api/pods"
)

// containerKind says what a named container is in a pod.
type containerKind int

const (
	kindMissing containerKind = iota
	// kindRegular is a container in spec.containers.
	kindRegular
	// kindSidecar is a native sidecar: an init container with restartPolicy Always.
	kindSidecar
	// kindInit is an ordinary init container, which runs to completion
	// and cannot be recreated.
	kindInit
)

// findContainer returns the pod's container of that name and what it is.
func findContainer(pod *corev1.Pod, name string) (*corev1.Container, containerKind) {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i], kindRegular
		}
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if c.Name == name {
			if pods.IsSidecar(c) {
				return c, kindSidecar
			}
			return c, kindInit
		}
	}
	return nil, kindMissing
}
