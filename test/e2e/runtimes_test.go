package e2e

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/rejuv-dev/rejuv/test/cluster/harness"
)

// runtimeOf is the CRI runtime of the named node, closed when the test
// ends.
func runtimeOf(t *testing.T, node string) runtimeapi.RuntimeServiceClient {
	t.Helper()
	socket, err := cluster.CRISocketOf(node)
	if err != nil {
		t.Fatal(err)
	}
	rt, _, conn, err := harness.DialCRI(socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return rt
}

// criTimes asks the runtime of whichever node runs a container (its ID as
// a pod's status gives it) when the container started and finished, to
// the nanosecond.
func criTimes(t *testing.T, containerID string) (started, finished time.Time) {
	t.Helper()
	_, id, _ := strings.Cut(containerID, "://")
	for _, n := range cluster.Nodes() {
		st, err := runtimeOf(t, n.Name).ContainerStatus(context.Background(), &runtimeapi.ContainerStatusRequest{ContainerId: id})
		if status.Code(err) == codes.NotFound {
			continue
		}
		if err != nil {
			t.Fatalf("CRI ContainerStatus %s on %s: %v", id, n.Name, err)
		}
		return time.Unix(0, st.Status.StartedAt), time.Unix(0, st.Status.FinishedAt)
	}
	t.Fatalf("no node's runtime has container %s", id)
	return time.Time{}, time.Time{}
}

// instancesOf describes every instance of the pod's container that the
// runtime of the pod's node keeps, newest attempt last: what a test prints
// when a container it expected is not there.
func instancesOf(t *testing.T, pod *corev1.Pod, name string) string {
	t.Helper()
	rt := runtimeOf(t, pod.Spec.NodeName)
	resp, err := rt.ListContainers(context.Background(), &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
		LabelSelector: map[string]string{"io.kubernetes.pod.uid": string(pod.UID), "io.kubernetes.container.name": name},
	}})
	if err != nil {
		return fmt.Sprintf("(list the instances of %s on %s: %v)", name, pod.Spec.NodeName, err)
	}
	cs := resp.GetContainers()
	slices.SortFunc(cs, func(a, b *runtimeapi.Container) int {
		return cmp.Compare(a.GetMetadata().GetAttempt(), b.GetMetadata().GetAttempt())
	})
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "attempt %d %s %s created %s", c.GetMetadata().GetAttempt(), c.GetId(), c.GetState(), time.Unix(0, c.GetCreatedAt()).UTC().Format(time.RFC3339Nano))
		if st, err := rt.ContainerStatus(context.Background(), &runtimeapi.ContainerStatusRequest{ContainerId: c.GetId()}); err == nil && st.GetStatus().GetFinishedAt() > 0 {
			fmt.Fprintf(&b, " finished %s exit %d %s", time.Unix(0, st.Status.FinishedAt).UTC().Format(time.RFC3339Nano), st.Status.ExitCode, st.Status.Reason)
		}
		b.WriteString("\n")
	}
	return b.String()
}
