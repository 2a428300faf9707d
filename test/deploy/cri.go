package deploy

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/rejuv-dev/rejuv/test/cluster/harness"
)

// DaemonPID is the host PID of the named node's daemon's process, from the
// node's container runtime, for measuring its memory and CPU.
func (s *Stack) DaemonPID(ctx context.Context, node string) (int, error) {
	pod, err := s.DaemonPod(ctx, node)
	if err != nil {
		return 0, err
	}
	return ContainerPID(ctx, s.cluster, pod, "daemon")
}

// ContainerPID is the host PID of a pod's running container, from the
// runtime of the pod's node.
func ContainerPID(ctx context.Context, cluster *harness.Cluster, p *corev1.Pod, container string) (int, error) {
	namespace, pod := p.Namespace, p.Name
	socket, err := cluster.CRISocketOf(p.Spec.NodeName)
	if err != nil {
		return 0, err
	}
	rt, _, conn, err := harness.DialCRI(socket)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	list, err := rt.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
		State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
		LabelSelector: map[string]string{
			"io.kubernetes.pod.namespace":  namespace,
			"io.kubernetes.pod.name":       pod,
			"io.kubernetes.container.name": container,
		},
	}})
	if err != nil {
		return 0, fmt.Errorf("list the containers of %s/%s: %w", namespace, pod, err)
	}
	if len(list.Containers) != 1 {
		return 0, fmt.Errorf("%d running %s containers in %s/%s, want 1", len(list.Containers), container, namespace, pod)
	}
	st, err := rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: list.Containers[0].Id, Verbose: true})
	if err != nil {
		return 0, fmt.Errorf("status of %s in %s/%s: %w", container, namespace, pod, err)
	}
	var info struct{ Pid int }
	if err := json.Unmarshal([]byte(st.Info["info"]), &info); err != nil {
		return 0, fmt.Errorf("read the runtime's status of %s in %s/%s: %w", container, namespace, pod, err)
	}
	if info.Pid == 0 {
		return 0, fmt.Errorf("no PID in the runtime's status of %s in %s/%s", container, namespace, pod)
	}
	return info.Pid, nil
}
