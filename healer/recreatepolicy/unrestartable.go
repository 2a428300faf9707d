package recreatepolicy

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// unrestartableMessage says why the pod's containers named are left
// alone: for each, the field of the pod by which the kubelet would not
// start it again once stopped (pods.Unrestartable). Without containers, the
// policy names none of the pod's. A pod of many containers gets a
// message cut to a decision's bound.
func unrestartableMessage(pod *corev1.Pod, containers []string) string {
	if len(containers) == 0 {
		return "the policy's containers name none of the pod's containers and native sidecars"
	}
	return v1alpha1.Truncate(pods.UnrestartableAll(pod, containers), v1alpha1.MaxReasonLength)
}
