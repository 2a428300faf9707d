package kube

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rejuv-dev/rejuv/api/pods"
)

// TestTheDaemonKeepsOfAPodWhatItReads: the daemon caches every pod of its
// node; a pod with a 250 KB annotation and a 900 KB preStop costs it what
// it reads (the statuses, whether a container has a readiness probe),
// not its size, and its cached copy names what was left out.
func TestTheDaemonKeepsOfAPodWhatItReads(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "fat", UID: "u1", Annotations: map[string]string{"example.com/blob": strings.Repeat("a", 250_000)},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}},
		Spec: corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{
			{Name: "app", Image: "img", ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{strings.Repeat("c", 100_000)}}}},
				Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", strings.Repeat("b", 900_000)}}}}},
			{Name: "helper", Image: "img"},
		}},
		Status: corev1.PodStatus{PodIP: "10.0.0.1", ContainerStatuses: []corev1.ContainerStatus{{Name: "app", ContainerID: "containerd://1", RestartCount: 3}}},
	}
	size := pod.Size()
	obj, err := trimPod(pod)
	if err != nil {
		t.Fatal(err)
	}
	got := obj.(*corev1.Pod)
	if kept := got.Size(); kept > 4<<10 {
		t.Errorf("the daemon keeps %d bytes of a pod of %d, want at most %d", kept, size, 4<<10)
	}
	if got.Status.PodIP != "10.0.0.1" || got.Spec.NodeName != "node-a" || pods.ContainerStatus(got, "app").RestartCount != 3 {
		t.Errorf("the daemon lost what it reads: %+v", got)
	}
	if pods.FindContainer(got, "app").Spec.ReadinessProbe == nil || pods.FindContainer(got, "helper").Spec.ReadinessProbe != nil {
		t.Error("the daemon no longer knows which containers have a readiness probe")
	}
	if note := got.Annotations[pods.TrimmedAnnotation]; !strings.Contains(note, "example.com/blob") || !strings.Contains(note, "app") {
		t.Errorf("%s = %q, want it to name what was left out", pods.TrimmedAnnotation, note)
	}
	if got.ManagedFields != nil {
		t.Error("managedFields kept")
	}
	// The pods a list's pages bring are trimmed before the informer trims
	// them again (pods.ListInPages): trimming twice keeps the same pod.
	again, err := trimPod(got.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(again, got) {
		t.Errorf("trimming a trimmed pod changed it: %+v, want %+v", again, got)
	}
}
