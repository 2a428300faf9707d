package executor

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
)

// The containers of a request are stopped one after another, as
// OpenKruise documents its request and as its daemon does: each
// container's preStop hook and stop come before the next one's, so that an
// app that drains its connections through a proxy sidecar listed after it
// still has the proxy while its hook runs. The kubelet starts each one
// again as soon as it is stopped. With orderedRecreate the next one also
// waits for the previous one's new instance to have started.

// stopOrder is the order in which the request's containers are stopped,
// as indexes into its list: the list's order, except that without
// orderedRecreate the native sidecars come after the other containers, in
// the reverse of their order in the pod's initContainers, as the kubelet
// stops a pod's containers when the pod terminates. orderedRecreate keeps
// the list's order whatever the containers are: its point is the order of
// the starts, which the user chose.
func stopOrder(crr *v1beta1.ContainerRecreateRequest, pod *corev1.Pod) []int {
	ordered := crr.EffectiveStrategy().OrderedRecreate
	order := make([]int, 0, len(crr.Spec.Containers))
	var sidecars []int
	// initIndex is each sidecar's place in the pod's initContainers.
	initIndex := map[int]int{}
	for i, c := range crr.Spec.Containers {
		if found := pods.FindContainer(pod, c.Name); !ordered && found.Kind == pods.ContainerSidecar {
			sidecars = append(sidecars, i)
			initIndex[i] = found.Index
			continue
		}
		order = append(order, i)
	}
	slices.SortFunc(sidecars, func(a, b int) int { return initIndex[b] - initIndex[a] })
	return append(order, sidecars...)
}

// failUnrecreatable fails, before anything is stopped, the containers the
// request cannot recreate: those it has no statusContext for (only a
// request the webhook never saw lacks it), and those the kubelet would not
// start again once stopped (checked by the webhook at creation, and again
// here against the pod itself, whatever another webhook changed after
// Rejuv's). With failurePolicy Fail, such a request stops nothing.
func failUnrecreatable(crr *v1beta1.ContainerRecreateRequest, pod *corev1.Pod, st *v1beta1.ContainerRecreateRequestStatus) {
	for i, c := range crr.Spec.Containers {
		s := &st.ContainerRecreateStates[i]
		switch {
		case s.Finished():
		case c.StatusContext == nil:
			s.Phase, s.Message = v1beta1.PhaseFailed, "the request has no statusContext for this container; create requests through Rejuv's webhook"
		case !pods.Restartable(pod, c.Name):
			s.Phase, s.Message = v1beta1.PhaseFailed, "not stopped: "+pods.Unrestartable(pod, c.Name)
		}
	}
}

// failFast fails the unfinished containers once one has failed, unless
// failurePolicy is Ignore; it says whether it did.
func failFast(st *v1beta1.ContainerRecreateRequestStatus, s v1beta1.ContainerRecreateRequestStrategy) bool {
	if s.FailurePolicy == v1beta1.FailurePolicyIgnore {
		return false
	}
	for _, cs := range st.ContainerRecreateStates {
		if cs.Phase == v1beta1.PhaseFailed {
			st.FailUnfinished(fmt.Sprintf("not recreated: container %s failed and failurePolicy is Fail", cs.Name))
			return true
		}
	}
	return false
}
