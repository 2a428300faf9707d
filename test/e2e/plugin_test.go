package e2e

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The plugin's binary, built once for the package's tests.
var (
	pluginOnce sync.Once
	pluginPath string
	pluginErr  error
)

// pluginRun is what one run of kubectl-rejuv printed and how it exited.
type pluginRun struct {
	stdout, stderr string
	code           int
	took           time.Duration
}

// kubectlRejuv runs the real plugin binary against the cluster, as a
// namespace's editor (the user "editor" with Kubernetes' edit role in ns,
// which Rejuv's shipped roles extend) unless args say otherwise.
func kubectlRejuv(t *testing.T, ns string, args ...string) pluginRun {
	t.Helper()
	return kubectlRejuvCtx(context.Background(), t, ns, args...)
}

func kubectlRejuvCtx(ctx context.Context, t *testing.T, ns string, args ...string) pluginRun {
	t.Helper()
	return runKubectlRejuv(ctx, t, append([]string{"-n", ns, "--as", editorUser}, args...)...)
}

// kubectlRejuvAsAdmin runs kubectl-rejuv as the cluster's admin: what an
// operator runs cluster-wide.
func kubectlRejuvAsAdmin(t *testing.T, args ...string) pluginRun {
	t.Helper()
	return runKubectlRejuv(context.Background(), t, args...)
}

// runKubectlRejuv runs kubectl-rejuv with the cluster's kubeconfig and
// args.
func runKubectlRejuv(ctx context.Context, t *testing.T, args ...string) pluginRun {
	t.Helper()
	full := append([]string{"--kubeconfig", cluster.Kubeconfig(), "--cache-dir", t.TempDir()}, args...)
	cmd := exec.CommandContext(ctx, pluginBinary(t), full...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	run := pluginRun{stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start)}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		run.code = exit.ExitCode()
	case err != nil:
		t.Fatalf("run kubectl-rejuv %s: %v", strings.Join(args, " "), err)
	}
	t.Logf("kubectl rejuv %s (%s):\n%s%s", strings.Join(args, " "), run.took.Round(100*time.Millisecond), run.stdout, run.stderr)
	return run
}

// pluginBinary builds kubectl-rejuv once for the package's tests.
func pluginBinary(t *testing.T) string {
	t.Helper()
	pluginOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kubectl-rejuv-")
		if err != nil {
			pluginErr = err
			return
		}
		pluginPath = filepath.Join(dir, "kubectl-rejuv")
		out, err := exec.Command("go", "build", "-o", pluginPath, "../../cmd/kubectl-rejuv").CombinedOutput()
		if err != nil {
			pluginErr = errors.New("go build kubectl-rejuv: " + err.Error() + "\n" + string(out))
		}
	})
	if pluginErr != nil {
		t.Fatal(pluginErr)
	}
	return pluginPath
}

// editorUser is the user the plugin runs as: bound to the edit role in
// each test's namespace by asEditor.
const editorUser = "editor"

// asEditor gives editorUser Kubernetes' edit role in ns, as a namespace's
// developers have it.
func asEditor(t *testing.T, ns string) {
	t.Helper()
	editIn(t, ns, editorUser)
}
