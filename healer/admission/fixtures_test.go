package admission

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

const testNode = "node-a"

func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "adm-"}}
	if err := admin.Create(context.Background(), ns); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	return ns.Name
}

// podSpec has a regular container with a preStop and ports, one that has
// not started, a native sidecar and an ordinary init container.
func podSpec() corev1.PodSpec {
	return corev1.PodSpec{
		NodeName:                      testNode,
		TerminationGracePeriodSeconds: ptr.To[int64](17),
		InitContainers: []corev1.Container{
			{Name: "setup", Image: "img"},
			{Name: "sidecar", Image: "img", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)},
		},
		Containers: []corev1.Container{
			{
				Name: "app", Image: "img",
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
				Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{
					Exec: &corev1.ExecAction{Command: []string{"sh", "-c", "drain"}},
				}},
			},
			{Name: "late", Image: "img"},
		},
	}
}

// runningStatus is what the kubelet would report: app and the sidecar run,
// late is still waiting for its image.
func runningStatus() corev1.PodStatus {
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}
	return corev1.PodStatus{
		Phase: corev1.PodRunning,
		InitContainerStatuses: []corev1.ContainerStatus{
			{Name: "setup", Image: "img", ContainerID: "containerd://setup1", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}},
			{Name: "sidecar", Image: "img", ContainerID: "containerd://side1", State: running, Ready: true, Started: new(true)},
		},
		ContainerStatuses: []corev1.ContainerStatus{
			{Name: "app", Image: "img", ContainerID: "containerd://app1", RestartCount: 2, State: running, Ready: true, Started: new(true)},
			{Name: "late", Image: "img", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}},
		},
	}
}

// createPod creates a pod with the given status; change adjusts it first.
func createPod(t *testing.T, ns, name string, change func(*corev1.Pod)) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: podSpec(), Status: runningStatus()}
	if change != nil {
		change(pod)
	}
	status := pod.Status
	if err := admin.Create(context.Background(), pod); err != nil {
		t.Fatalf("create pod %s/%s: %v", ns, name, err)
	}
	pod.Status = status
	if err := admin.Status().Update(context.Background(), pod); err != nil {
		t.Fatalf("set status of pod %s/%s: %v", ns, name, err)
	}
	return pod
}

// newCRR asks to recreate containers of pod "web".
func newCRR(ns, name string, containers ...string) *v1beta1.ContainerRecreateRequest {
	crr := &v1beta1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       v1beta1.ContainerRecreateRequestSpec{PodName: "web"},
	}
	for _, c := range containers {
		crr.Spec.Containers = append(crr.Spec.Containers, v1beta1.ContainerRecreateRequestContainer{Name: c})
	}
	return crr
}

func clientKey(crr *v1beta1.ContainerRecreateRequest) types.NamespacedName {
	return types.NamespacedName{Namespace: crr.Namespace, Name: crr.Name}
}

func unstructuredSerializer() runtime.NegotiatedSerializer {
	return serializer.NewCodecFactory(scheme).WithoutConversion()
}
