package crr

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
)

// PodReadyCondition is the readiness gate through which a request takes its
// pod out of service before anything is stopped.
const PodReadyCondition corev1.PodConditionType = v1beta1.PodReadyCondition

// Reasons the manager gives on the pod's KruisePodReady condition.
const (
	reasonRecreating = "ContainerRecreating"
	reasonReleased   = "NoContainerRecreating"
)

// setPodReady sets the pod's KruisePodReady condition with a strategic merge
// patch (with opts), which merges conditions by type and so leaves the
// kubelet's alone.
func setPodReady(ctx context.Context, c client.Client, pod *corev1.Pod, status corev1.ConditionStatus, reason, message string, opts ...client.MergeFromOption) error {
	if cur := pods.Condition(pod, PodReadyCondition); cur != nil && cur.Status == status && cur.Reason == reason {
		return nil
	}
	base := pod.DeepCopy()
	now := metav1.Now()
	cond := corev1.PodCondition{Type: PodReadyCondition, Status: status, Reason: reason, Message: message, LastTransitionTime: now, LastProbeTime: now}
	if cur := pods.Condition(pod, PodReadyCondition); cur != nil {
		*cur = cond
	} else {
		pod.Status.Conditions = append(pod.Status.Conditions, cond)
	}
	if err := c.Status().Patch(ctx, pod, client.StrategicMergeFrom(base, opts...)); err != nil {
		return fmt.Errorf("set %s=%s on pod %s/%s: %w", PodReadyCondition, status, pod.Namespace, pod.Name, err)
	}
	return nil
}

// releasePod sets the condition True only if the pod has not changed
// since it was read (the patch carries its resourceVersion): a replica
// whose cache lags, or that raced the leader taking the pod out, gets a
// conflict and reads again instead of putting a held pod back in service.
func releasePod(ctx context.Context, c client.Client, pod *corev1.Pod) error {
	return setPodReady(ctx, c, pod, corev1.ConditionTrue, reasonReleased, "", client.MergeFromWithOptimisticLock{})
}
