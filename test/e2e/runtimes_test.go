package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
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
