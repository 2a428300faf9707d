package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// TestDaemonKilledDuringAStopResumesWithoutStoppingTwice kills the daemon
// while it is stopping a container that ignores SIGTERM (the stop waits out
// the grace period), starts it again, and checks that the request ends
// Succeeded with the container restarted exactly once.
func TestDaemonKilledDuringAStopResumesWithoutStoppingTwice(t *testing.T) {
	// Not parallel: it runs its own manager and daemon for the node, and a
	// second daemon must not act beside the shared one.
	c := ctrlClient(t)
	installCRD(t, c)
	startHealer(t, c)
	daemonArgs := func(probe int) []string {
		return []string{
			"--kubeconfig=" + cluster.Kubeconfig(),
			"--node-name=" + cluster.NodeName(),
			"--host-run-dir=" + cluster.Config.Dir,
			fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", probe),
			"--metrics-bind-address=0",
		}
	}
	probe := freePort(t)
	first, err := launch("daemon", daemonArgs(probe), t.TempDir(), fmt.Sprintf("http://127.0.0.1:%d/readyz", probe))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(first.Kill)

	ctx := context.Background()
	ns := newNamespace(t)
	spec := testappPod("stubborn")
	spec.Spec.Containers[0].Args = []string{"--ignore-sigterm"}
	pod := createPod(t, ns, spec)
	before := containerStatus(pod, "app")

	crr := newRequest(ns, "crash", pod.Name, "app")
	crr.Spec.Strategy = &v1beta1.ContainerRecreateRequestStrategy{TerminationGracePeriodSeconds: new(int64(4))}
	if err := c.Create(ctx, crr); err != nil {
		t.Fatal(err)
	}
	// The daemon sends SIGTERM at once and SIGKILL after 4 s; kill it in
	// between, before it can record the stop.
	time.Sleep(2 * time.Second)
	first.Kill()

	probe = freePort(t)
	startBinary(t, "daemon", daemonArgs(probe), fmt.Sprintf("http://127.0.0.1:%d/readyz", probe))
	got, _ := waitCompleted(t, c, crr, 90*time.Second)
	if got.Status.Result != v1beta1.ResultSucceeded {
		t.Fatalf("result %q: %+v", got.Status.Result, got.Status.ContainerRecreateStates)
	}
	after, err := kube.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := containerStatus(after, "app")
	if now.RestartCount != before.RestartCount+1 || now.ContainerID == before.ContainerID {
		t.Errorf("restartCount %d -> %d, ID %s -> %s: want exactly one restart", before.RestartCount, now.RestartCount, before.ContainerID, now.ContainerID)
	}
	// The kill must have come between the stop and its record.
	log := first.Tail(100)
	if !strings.Contains(log, `"msg":"stopping container"`) || strings.Contains(log, `"msg":"stopped container"`) {
		t.Errorf("the first daemon was not killed during the stop; its log:\n%s", first.Tail(5))
	}
}
