package bench

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/rejuv-dev/rejuv/test/cluster/harness"
	"github.com/rejuv-dev/rejuv/test/images"
)

// newNamespace creates a namespace and waits for its default ServiceAccount.
func newNamespace(b *testing.B) string {
	b.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "bench-"}}
	if err := stack.Client.Create(ctx, ns); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = stack.Client.Delete(context.Background(), ns) })
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		sa := &corev1.ServiceAccount{}
		return stack.Client.Get(ctx, nsName(ns.Name, "default"), sa) == nil, nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return ns.Name
}

// target is one container to recreate.
type target struct {
	ns, pod, container string
}

// createPods creates pods of perPod testapps each (no probes: only the
// restart is measured) until n containers exist, on the first node (whose
// daemon is the one measured), and waits for them to run.
// Every sample gets a container of its own: the kubelet's restart back-off
// applies to a container restarted again soon.
func createPods(b *testing.B, ns, prefix string, n, perPod int) []target {
	b.Helper()
	ctx := context.Background()
	var out []target
	for p := 0; len(out) < n; p++ {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s-%d", prefix, p)},
			Spec: corev1.PodSpec{NodeName: cluster.NodeName(), TerminationGracePeriodSeconds: new(int64(2))}}
		for i := 0; i < perPod && len(out) < n; i++ {
			name := fmt.Sprintf("c%d", i)
			pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{
				Name: name, Image: images.TestApp.Ref(),
				Args: []string{fmt.Sprintf("--listen=:%d", 8080+i)},
			})
			out = append(out, target{ns: ns, pod: pod.Name, container: name})
		}
		if err := stack.Client.Create(ctx, pod); err != nil {
			b.Fatal(err)
		}
	}
	for _, t := range out {
		waitRunning(b, t, "")
	}
	return out
}

// waitRunning polls the pod every 5 ms until the container runs with an ID
// other than notID, and returns its status and when that was first seen.
func waitRunning(b *testing.B, t target, notID string) (corev1.ContainerStatus, time.Time) {
	b.Helper()
	var st corev1.ContainerStatus
	var seen time.Time
	err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		pod := &corev1.Pod{}
		if err := stack.Client.Get(ctx, nsName(t.ns, t.pod), pod); err != nil {
			return false, nil
		}
		for _, cs := range pod.Status.ContainerStatuses {
			if cs.Name == t.container && cs.State.Running != nil && cs.ContainerID != "" && cs.ContainerID != notID {
				st, seen = cs, time.Now()
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		b.Fatalf("%s/%s %s not running: %v", t.ns, t.pod, t.container, err)
	}
	return st, seen
}

// criFinishedAt asks the runtime when a container exited: zero while it
// runs, or once the kubelet has removed it.
func criFinishedAt(ctx context.Context, rt runtimeapi.RuntimeServiceClient, containerID string) time.Time {
	_, id, _ := strings.Cut(containerID, "://")
	st, err := rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
	if err != nil || st.Status.State != runtimeapi.ContainerState_CONTAINER_EXITED {
		return time.Time{}
	}
	return time.Unix(0, st.Status.FinishedAt)
}

func dialCRI(b *testing.B) (runtimeapi.RuntimeServiceClient, func()) {
	b.Helper()
	rt, _, conn, err := harness.DialCRI(cluster.CRISocket())
	if err != nil {
		b.Fatal(err)
	}
	return rt, func() { _ = conn.Close() }
}
