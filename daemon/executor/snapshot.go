package executor

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
)

// snapshot is status.containerStatusSnapshot as OpenKruise's controller
// fills it while a request recreates, and keeps on completion: the pod's
// statuses of the request's containers that run their new instance, in
// the request's order. A container counts once this request stopped it or
// it succeeded, and its status reports an instance other than the one the
// request was admitted with: told apart by container ID, not by start
// times of one-second resolution.
func snapshot(crr *v1beta1.ContainerRecreateRequest, pod *corev1.Pod, st *v1beta1.ContainerRecreateRequestStatus) []v1beta1.ContainerRecreateRequestSyncContainerStatus {
	var out []v1beta1.ContainerRecreateRequestSyncContainerStatus
	for i, c := range crr.Spec.Containers {
		s := &st.ContainerRecreateStates[i]
		cs := pods.ContainerStatus(pod, c.Name)
		switch {
		case cs == nil || cs.State.Running == nil:
		case !s.IsKilled && s.Phase != v1beta1.PhaseSucceeded:
		case c.StatusContext != nil && cs.ContainerID == c.StatusContext.ContainerID:
		default:
			out = append(out, v1beta1.ContainerRecreateRequestSyncContainerStatus{
				Name: cs.Name, Ready: cs.Ready, RestartCount: cs.RestartCount, ContainerID: cs.ContainerID,
			})
		}
	}
	return out
}
