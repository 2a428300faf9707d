package harness

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	corev1 "k8s.io/api/core/v1"
)

// KillContainer sends SIGKILL to every process of the pod's first
// container, as a crash or the kernel's OOM killer would end it, found by
// the container's ID in their cgroups on this machine: the node's
// containerd need not answer (it may be down for another fault).
func KillContainer(pod *corev1.Pod) error {
	if len(pod.Status.ContainerStatuses) == 0 || pod.Status.ContainerStatuses[0].ContainerID == "" {
		return fmt.Errorf("pod %s runs no container yet", pod.Name)
	}
	id := pod.Status.ContainerStatuses[0].ContainerID
	id = id[strings.Index(id, "://")+3:]
	pids, err := processesOf(id)
	if err != nil {
		return err
	}
	if len(pids) == 0 {
		return fmt.Errorf("no process of container %s of pod %s on this machine", id[:12], pod.Name)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("kill -9 %d (%s): %w", pid, pod.Name, err)
		}
	}
	return nil
}

// processesOf are the processes whose cgroup path ends in the container's
// ID.
func processesOf(id string) ([]int, error) {
	paths, err := filepath.Glob("/proc/[0-9]*/cgroup")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil || !strings.Contains(string(b), "/"+id+"\n") {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(path))); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}
