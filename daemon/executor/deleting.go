package executor

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
)

// errPodDeleting says that a container was not stopped, nor its preStop
// run, because its pod is being deleted.
var errPodDeleting = errors.New("the pod is being deleted")

// deletingMessage is a container's message when its stop was called off
// because the pod is being deleted; the manager ends the request.
const deletingMessage = "not stopped: the pod is being deleted"

// deleting says whether the pod is being deleted, or is gone, as the
// daemon's cache holds it now. The kubelet then stops the pod's containers
// itself, each preStop hook first: Rejuv must neither run a hook a second
// time nor stop a container with its own grace. A pass reads the pod once,
// and a hook may run for the whole grace period, so this is asked again
// right before each hook and each stop.
func (e *Executor) deleting(pod *corev1.Pod) bool {
	if pod.DeletionTimestamp != nil {
		return true
	}
	cur, ok := e.Store.Pod(pod.Namespace, pod.Name)
	return !ok || cur.UID != pod.UID || cur.DeletionTimestamp != nil
}
