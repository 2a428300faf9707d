package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// TestDaemonFindsTheNodesRuntime reads the shared daemon's metrics: it was
// started with the cluster's instance directory as the host run directory,
// where containerd's socket sits as it would under /run.
func TestDaemonFindsTheNodesRuntime(t *testing.T) {
	t.Parallel()
	body := get(t, rejuvStack(t).MetricsURL)
	if !strings.Contains(body, `rejuv_daemon_runtime_info{runtime="containerd",version="1.6.`) {
		t.Errorf("metrics lack rejuv_daemon_runtime_info for containerd:\n%s", grepLines(body, "rejuv_daemon"))
	}
	if !strings.Contains(body, `rejuv_daemon_cri_request_duration_seconds_count{code="OK",method="Version"}`) {
		t.Errorf("metrics lack the timed Version call:\n%s", grepLines(body, "rejuv_daemon"))
	}
}

// TestDaemonWithoutRuntimeIsNotReadyAndSaysWhy points a second daemon at a
// socket that does not exist (and at a node with no pods, so that it leaves
// the shared daemon's work alone).
func TestDaemonWithoutRuntimeIsNotReadyAndSaysWhy(t *testing.T) {
	t.Parallel()
	rejuvStack(t)
	probe := freePort(t)
	missing := t.TempDir() + "/cri.sock"
	_, logPath := startBinary(t, "daemon", []string{
		"--kubeconfig=" + cluster.Kubeconfig(),
		"--node-name=no-such-node",
		"--cri-socket=" + missing,
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", probe),
		"--metrics-bind-address=0",
	}, "")
	want := "no container runtime answered the CRI Version call; tried " + missing + ": no such file; check --cri-socket"
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		b, _ := os.ReadFile(logPath)
		return strings.Contains(string(b), want), nil
	})
	if err != nil {
		b, _ := os.ReadFile(logPath)
		t.Fatalf("log lacks %q:\n%s", want, tailLines(string(b), 20))
	}
	if code := httpStatus(context.Background(), fmt.Sprintf("http://127.0.0.1:%d/readyz", probe)); code != http.StatusInternalServerError {
		t.Errorf("/readyz = %d without a runtime, want 500", code)
	}
	if code := httpStatus(context.Background(), fmt.Sprintf("http://127.0.0.1:%d/healthz", probe)); code != http.StatusOK {
		t.Errorf("/healthz = %d, want 200: a missing runtime is not a reason to restart the daemon", code)
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func grepLines(s, sub string) string {
	var out []string
	for line := range strings.SplitSeq(s, "\n") {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
