package pods

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

func TestPodQuestions(t *testing.T) {
	pod := &corev1.Pod{
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "setup"}, {Name: "proxy", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}},
			Containers:     []corev1.Container{{Name: "app"}},
			ReadinessGates: []corev1.PodReadinessGate{{ConditionType: v1beta1.PodReadyCondition}},
		},
		Status: corev1.PodStatus{
			Phase:                 corev1.PodRunning,
			Conditions:            []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses:     []corev1.ContainerStatus{{Name: "app", ContainerID: "containerd://a"}},
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "proxy", ContainerID: "containerd://p"}},
		},
	}
	if ContainerStatus(pod, "app").ContainerID != "containerd://a" || ContainerStatus(pod, "proxy").ContainerID != "containerd://p" || ContainerStatus(pod, "db") != nil {
		t.Error("ContainerStatus does not find regular and init containers' statuses by name")
	}
	if IsSidecar(&pod.Spec.InitContainers[0]) || !IsSidecar(&pod.Spec.InitContainers[1]) {
		t.Error("IsSidecar: only an init container with restartPolicy Always is a native sidecar")
	}
	if !Ready(pod) || !HasReadinessGate(pod) || Finished(pod) {
		t.Errorf("ready %t, gate %t, finished %t; want true, true, false", Ready(pod), HasReadinessGate(pod), Finished(pod))
	}
	pod.Spec.RestartPolicy, pod.Status.Phase, pod.Spec.ReadinessGates = corev1.RestartPolicyOnFailure, corev1.PodSucceeded, nil
	pod.Status.Conditions[0].Status = corev1.ConditionFalse
	if Ready(pod) || HasReadinessGate(pod) || !Finished(pod) {
		t.Errorf("ready %t, gate %t, finished %t; want false, false, true", Ready(pod), HasReadinessGate(pod), Finished(pod))
	}
	if Condition(pod, v1beta1.PodReadyCondition) != nil {
		t.Error("Condition found a condition the pod does not have")
	}
}

// TestRunning: only a pod running on a node and not being deleted.
func TestRunning(t *testing.T) {
	now := metav1.Now()
	running := corev1.Pod{Spec: corev1.PodSpec{NodeName: "n"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	deleting := *running.DeepCopy()
	deleting.DeletionTimestamp = &now
	pending := *running.DeepCopy()
	pending.Status.Phase = corev1.PodPending
	unscheduled := *running.DeepCopy()
	unscheduled.Spec.NodeName = ""
	for name, tc := range map[string]struct {
		pod  corev1.Pod
		want bool
	}{"running": {running, true}, "deleting": {deleting, false}, "pending": {pending, false}, "unscheduled": {unscheduled, false}} {
		if got := Running(&tc.pod); got != tc.want {
			t.Errorf("%s: Running = %v", name, got)
		}
	}
}

// TestOutOfServiceByGate: a pod with the readiness gate is out of service
// until its condition is True, also before it is set at all; a pod
// without the gate, being deleted or finished is not.
func TestOutOfServiceByGate(t *testing.T) {
	gated := func(phase corev1.PodPhase, conditions ...corev1.PodCondition) *corev1.Pod {
		return &corev1.Pod{
			Spec:   corev1.PodSpec{ReadinessGates: []corev1.PodReadinessGate{{ConditionType: v1beta1.PodReadyCondition}}},
			Status: corev1.PodStatus{Phase: phase, Conditions: conditions},
		}
	}
	condition := func(s corev1.ConditionStatus) corev1.PodCondition {
		return corev1.PodCondition{Type: v1beta1.PodReadyCondition, Status: s}
	}
	deleting := gated(corev1.PodRunning, condition(corev1.ConditionFalse))
	deleting.DeletionTimestamp = &metav1.Time{}
	for _, tt := range []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"held", gated(corev1.PodRunning, condition(corev1.ConditionFalse)), true},
		{"condition not set yet", gated(corev1.PodPending), true},
		{"back in service", gated(corev1.PodRunning, condition(corev1.ConditionTrue)), false},
		{"no gate", &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning}}, false},
		{"being deleted", deleting, false},
		{"finished", gated(corev1.PodSucceeded, condition(corev1.ConditionFalse)), false},
	} {
		if got := OutOfServiceByGate(tt.pod); got != tt.want {
			t.Errorf("%s: OutOfServiceByGate = %t, want %t", tt.name, got, tt.want)
		}
	}
}
