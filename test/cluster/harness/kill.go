package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/rejuv-dev/rejuv/api/pods"
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

// WaitRestarted waits, polling every second up to limit, until the pod
// KillContainer was given (same UID) runs its first container again (a
// restartCount above the one it had) and is Ready, or is gone or being
// deleted (a rollout's old replica is not started again).
func WaitRestarted(ctx context.Context, kube kubernetes.Interface, pod *corev1.Pod, limit time.Duration) error {
	before := pod.Status.ContainerStatuses[0].RestartCount
	return wait.PollUntilContextTimeout(ctx, time.Second, limit, false, func(ctx context.Context) (bool, error) {
		p, err := kube.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err != nil {
			return false, nil
		}
		if p.UID != pod.UID || p.DeletionTimestamp != nil {
			return true, nil
		}
		return pods.Ready(p) && len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].RestartCount > before, nil
	})
}
