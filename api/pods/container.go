package pods

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ContainerKind says what a named container is in a pod.
type ContainerKind int

const (
	// ContainerMissing is no container: the pod has none of that name.
	ContainerMissing ContainerKind = iota
	// ContainerRegular is a container in spec.containers.
	ContainerRegular
	// ContainerSidecar is a native sidecar: an init container with
	// restartPolicy Always.
	ContainerSidecar
	// ContainerInit is an ordinary init container, which runs to
	// completion once.
	ContainerInit
)

// PodContainer is one of a pod's containers, found by name.
type PodContainer struct {
	// Spec is nil when Kind is ContainerMissing.
	Spec *corev1.Container
	Kind ContainerKind
	// Index is its place in spec.containers, or in spec.initContainers
	// for a sidecar or an init container.
	Index int
}

// Field is the container's place in the pod, for messages.
func (c PodContainer) Field() *field.Path {
	if c.Kind == ContainerRegular {
		return field.NewPath("spec", "containers").Index(c.Index)
	}
	return field.NewPath("spec", "initContainers").Index(c.Index)
}

// FindContainer finds the pod's container of that name, regular or init
// (names are unique across both in a pod).
func FindContainer(pod *corev1.Pod, name string) PodContainer {
	for i := range pod.Spec.Containers {
		if c := &pod.Spec.Containers[i]; c.Name == name {
			return PodContainer{Spec: c, Kind: ContainerRegular, Index: i}
		}
	}
	for i := range pod.Spec.InitContainers {
		if c := &pod.Spec.InitContainers[i]; c.Name == name {
			kind := ContainerInit
			if IsSidecar(c) {
				kind = ContainerSidecar
			}
			return PodContainer{Spec: c, Kind: kind, Index: i}
		}
	}
	return PodContainer{Kind: ContainerMissing}
}
