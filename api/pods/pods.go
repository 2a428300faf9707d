package pods

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// ContainerStatus is the status of the pod's container of that name,
// regular or init, or nil.
func ContainerStatus(pod *corev1.Pod, name string) *corev1.ContainerStatus {
	if st := StatusIn(pod.Status.ContainerStatuses, name); st != nil {
		return st
	}
	return StatusIn(pod.Status.InitContainerStatuses, name)
}

// StatusIn is the status of that name in one list of statuses, or nil.
func StatusIn(statuses []corev1.ContainerStatus, name string) *corev1.ContainerStatus {
	for i := range statuses {
		if statuses[i].Name == name {
			return &statuses[i]
		}
	}
	return nil
}

// IsSidecar says whether an init container is a native sidecar
// (restartPolicy Always), which the kubelet restarts whenever it stops,
// whatever the pod's restartPolicy.
func IsSidecar(c *corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// Running says whether the pod runs on a node and is not being deleted:
// the pods a policy selects and a rolling restart restarts.
func Running(pod *corev1.Pod) bool {
	return pod.DeletionTimestamp == nil && pod.Status.Phase == corev1.PodRunning && pod.Spec.NodeName != ""
}

// Finished says whether the pod has terminated for good.
func Finished(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// Condition is the pod's condition of that type, or nil.
func Condition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// Ready says whether the pod's Ready condition is True.
func Ready(pod *corev1.Pod) bool {
	c := Condition(pod, corev1.PodReady)
	return c != nil && c.Status == corev1.ConditionTrue
}

// HasReadinessGate says whether the pod has the readiness gate
// v1beta1.PodReadyCondition, through which a request takes the pod out of
// service before anything is stopped.
func HasReadinessGate(pod *corev1.Pod) bool {
	for _, g := range pod.Spec.ReadinessGates {
		if g.ConditionType == v1beta1.PodReadyCondition {
			return true
		}
	}
	return false
}

// OutOfServiceByGate says whether the readiness gate keeps the pod out of
// its Services: it has the gate, runs or waits to, is not being deleted,
// and its v1beta1.PodReadyCondition is not True. A pod whose condition
// the manager has not set yet counts: without the manager, nothing would
// set it.
func OutOfServiceByGate(pod *corev1.Pod) bool {
	if pod.DeletionTimestamp != nil || Finished(pod) || !HasReadinessGate(pod) {
		return false
	}
	c := Condition(pod, v1beta1.PodReadyCondition)
	return c == nil || c.Status != corev1.ConditionTrue
}
