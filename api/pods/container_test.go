package pods

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestFindContainer(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "setup"}, {Name: "proxy", RestartPolicy: &always}},
		Containers:     []corev1.Container{{Name: "app"}, {Name: "worker"}},
	}}
	for _, tt := range []struct {
		name  string
		kind  ContainerKind
		field string
	}{
		{"worker", ContainerRegular, "spec.containers[1]"},
		{"proxy", ContainerSidecar, "spec.initContainers[1]"},
		{"setup", ContainerInit, "spec.initContainers[0]"},
		{"none", ContainerMissing, ""},
	} {
		c := FindContainer(pod, tt.name)
		if c.Kind != tt.kind || (c.Spec == nil) != (tt.kind == ContainerMissing) {
			t.Errorf("FindContainer(%s) = kind %d, spec %v, want kind %d", tt.name, c.Kind, c.Spec, tt.kind)
			continue
		}
		if c.Spec != nil && (c.Spec.Name != tt.name || c.Field().String() != tt.field) {
			t.Errorf("FindContainer(%s) = %s at %s, want it at %s", tt.name, c.Spec.Name, c.Field(), tt.field)
		}
	}
}
