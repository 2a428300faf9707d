package executor

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/daemon/cri"
)

// The labels the kubelet puts on every container it creates through the CRI.
const (
	kubeletPodUIDLabel        = "io.kubernetes.pod.uid"
	kubeletContainerNameLabel = "io.kubernetes.container.name"
)

// instance is one run of a pod's container in the runtime: the kubelet
// creates a new one, with a new ID, for every restart.
type instance struct {
	id      string
	attempt uint32
	created time.Time
	state   runtimeapi.ContainerState
}

// newestInstance returns the container's newest instance in the runtime,
// which the pod's status may not report yet (the kubelet reports a new
// container only once its postStart hook has returned), or nil when the
// runtime has none.
func newestInstance(ctx context.Context, rt *cri.Client, pod *corev1.Pod, name string) (*instance, error) {
	resp, err := rt.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
		LabelSelector: map[string]string{kubeletPodUIDLabel: string(pod.UID), kubeletContainerNameLabel: name},
	}})
	if err != nil {
		return nil, fmt.Errorf("list the runtime's instances of container %s of pod %s/%s: %w", name, pod.Namespace, pod.Name, err)
	}
	var newest *instance
	for _, c := range resp.GetContainers() {
		in := &instance{id: c.GetId(), attempt: c.GetMetadata().GetAttempt(), created: time.Unix(0, c.GetCreatedAt()), state: c.GetState()}
		if newest == nil || in.attempt > newest.attempt || (in.attempt == newest.attempt && in.created.After(newest.created)) {
			newest = in
		}
	}
	return newest, nil
}

// requestedAt is when the request was admitted, to the nanosecond as the
// webhook recorded it; creationTimestamp (whole seconds) for a request
// without the record.
func requestedAt(crr *v1beta1.ContainerRecreateRequest) time.Time {
	if t, err := time.Parse(time.RFC3339Nano, crr.Annotations[v1beta1.RequestedAtAnnotation]); err == nil {
		return t
	}
	return crr.CreationTimestamp.Time
}

// since says whether the instance began after the request: created after
// it was admitted, or running after this request stopped the container
// (the stopped instance has exited, so a running one is its successor,
// whatever the clocks of the manager's and this node say).
func (in *instance) since(crr *v1beta1.ContainerRecreateRequest, state *v1beta1.ContainerRecreateRequestContainerRecreateState) bool {
	if state.IsKilled && in.state != runtimeapi.ContainerState_CONTAINER_EXITED {
		return true
	}
	return !in.created.Before(requestedAt(crr))
}

// reported says whether the pod's status reports this instance.
func (in *instance) reported(cs *corev1.ContainerStatus) bool {
	return cs != nil && runtimeID(cs.ContainerID) == in.id
}
