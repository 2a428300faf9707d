package e2e

import (
	"context"

	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/rejuv-dev/rejuv/test/cluster/harness"
)

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// buildBinaries builds the project's binaries once per test run.
func buildBinaries() (string, error) {
	buildOnce.Do(func() {
		root, err := harness.RepoRoot()
		if err != nil {
			buildErr = err
			return
		}
		if binDir, buildErr = os.MkdirTemp("", "rejuv-bin"); buildErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", binDir+"/", "./cmd/...")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/...: %w\n%s", err, out)
		}
	})
	return binDir, buildErr
}

// process is one of the built binaries running.
type process struct {
	name, log string
	cmd       *exec.Cmd
	logFile   *os.File
	once      sync.Once
}

// launch starts a built binary with its output in a log file in logDir and,
// when readyURL is set, waits until it answers 200 there.
func launch(name string, args []string, logDir, readyURL string) (*process, error) {
	bin, err := buildBinaries()
	if err != nil {
		return nil, err
	}
	p := &process{name: name, log: filepath.Join(logDir, name+".log")}
	if p.logFile, err = os.Create(p.log); err != nil {
		return nil, err
	}
	p.cmd = exec.Command(filepath.Join(bin, name), args...)
	p.cmd.Stdout, p.cmd.Stderr = p.logFile, p.logFile
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	if readyURL == "" {
		return p, nil
	}
	err = wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		return httpStatus(ctx, readyURL) == http.StatusOK, nil
	})
	if err != nil {
		p.stop()
		return nil, fmt.Errorf("%s not ready at %s: %w\n%s", name, readyURL, err, p.tail(40))
	}
	return p, nil
}

// stop interrupts the process and waits for it.
func (p *process) stop() {
	p.once.Do(func() {
		_ = p.cmd.Process.Signal(os.Interrupt)
		_ = p.cmd.Wait()
		_ = p.logFile.Close()
	})
}

// kill ends the process at once, as a crash would.
func (p *process) kill() {
	p.once.Do(func() {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
		_ = p.logFile.Close()
	})
}

func (p *process) tail(n int) string {
	b, _ := os.ReadFile(p.log)
	return tailLines(string(b), n)
}

// startBinary runs a built binary until the test ends, showing the end of
// its log when the test fails. It returns stop and the log's path.
func startBinary(t *testing.T, name string, args []string, readyURL string) (stop func(), logPath string) {
	t.Helper()
	p, err := launch(name, args, t.TempDir(), readyURL)
	if err != nil {
		t.Fatal(err)
	}
	stop = func() {
		p.stop()
		if t.Failed() {
			t.Logf("%s log:\n%s", name, p.tail(40))
		}
	}
	t.Cleanup(stop)
	return stop, p.log
}

// httpStatus GETs url and returns the status code, or 0 when nothing answers.
func httpStatus(ctx context.Context, url string) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// portFree returns a loopback port nobody listens on now.
func portFree() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func freePort(t *testing.T) int {
	t.Helper()
	p, err := portFree()
	if err != nil {
		t.Fatal(err)
	}
	return p
}
