package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/rejuv-dev/rejuv/test/deploy"
)

// stack is Rejuv as installed on the cluster (see package deploy): TestMain
// installs it before the tests and removes it after them. Tests run in
// parallel, each on its own pods, unless they disturb the stack itself.
var stack *deploy.Stack

// health follows the stack's components over the run; TestMain checks it
// after the tests.
var health *deploy.Health

// rejuvStack returns the installed stack.
func rejuvStack(t *testing.T) *deploy.Stack {
	t.Helper()
	if stack == nil {
		t.Fatal("Rejuv is not installed")
	}
	return stack
}

// disturbs says that the test restarts Rejuv's components, or the node's
// kubelet, containerd or API server, on purpose: restarts of Rejuv's
// containers from now until the test ends are not held against the run
// (deploy.Health tells them apart by pod and container). Call it before
// the disturbance; the run still fails on any panic.
func disturbs(t *testing.T) {
	t.Helper()
	done, err := health.Disturb(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := done(context.Background()); err != nil {
			t.Error(err)
		}
	})
}

// daemonMetrics scrapes the named node's daemon as a scraper bound to the
// shipped metrics reader role.
func daemonMetrics(t *testing.T, node string) string {
	t.Helper()
	return metricsOf(t, func(ctx context.Context) (*corev1.Pod, error) { return rejuvStack(t).DaemonPod(ctx, node) })
}

// leaderMetrics scrapes the manager replica that holds the lease, the one
// that runs the controllers.
func leaderMetrics(t *testing.T) string {
	t.Helper()
	return metricsOf(t, rejuvStack(t).Leader)
}

func metricsOf(t *testing.T, pod func(context.Context) (*corev1.Pod, error)) string {
	t.Helper()
	ctx := context.Background()
	p, err := pod(ctx)
	if err != nil {
		t.Fatal(err)
	}
	body, err := stack.Metrics(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// podLog reads a pod of the stack's log, failing the test when it cannot.
func podLog(t *testing.T, pod string, previous bool) string {
	t.Helper()
	log, err := rejuvStack(t).Logs(context.Background(), pod, previous)
	if err != nil {
		t.Fatal(err)
	}
	return log
}

// waitLog waits up to limit for a pod's log to contain want and returns
// the log.
func waitLog(t *testing.T, pod *corev1.Pod, want string, limit time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		log := podLog(t, pod.Name, false)
		if strings.Contains(log, want) {
			return log
		}
		if time.Now().After(deadline) {
			t.Fatalf("the log of %s does not say %q within %s:\n%s", pod.Name, want, limit, deploy.TailLines(log, 20))
		}
		time.Sleep(250 * time.Millisecond)
	}
}
