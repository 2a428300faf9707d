package deploy

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/rejuv-dev/rejuv/test/cluster/harness"
)

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// Build builds the project's binaries once per process into the
// checkout's .cache/stack-bin (the same directory every time, so that runs
// do not leave copies behind) and returns that directory.
func Build() (string, error) {
	buildOnce.Do(func() {
		root, err := harness.RepoRoot()
		if err != nil {
			buildErr = err
			return
		}
		binDir = filepath.Join(root, ".cache", "stack-bin")
		if buildErr = os.MkdirAll(binDir, 0o755); buildErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-trimpath", "-o", binDir+"/", "./cmd/...")
		cmd.Dir = root
		// Static, as make build and the images build them.
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/...: %w\n%s", err, out)
		}
	})
	return binDir, buildErr
}

// Process is one of the built binaries running.
type Process struct {
	Name, Log string
	cmd       *exec.Cmd
	logFile   *os.File
	once      sync.Once
}

// Launch starts a built binary with its output in logDir/NAME.log and, when
// readyURL is set, waits until it answers 200 there.
func Launch(name string, args []string, logDir, readyURL string) (*Process, error) {
	bin, err := Build()
	if err != nil {
		return nil, err
	}
	p := &Process{Name: name, Log: filepath.Join(logDir, name+".log")}
	if p.logFile, err = os.OpenFile(p.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err != nil {
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
		return HTTPStatus(ctx, readyURL) == http.StatusOK, nil
	})
	if err != nil {
		p.Stop()
		return nil, fmt.Errorf("%s not ready at %s: %w\n%s", name, readyURL, err, p.Tail(40))
	}
	return p, nil
}

// PID is the process's ID.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Stop interrupts the process and waits for it.
func (p *Process) Stop() {
	p.once.Do(func() {
		_ = p.cmd.Process.Signal(os.Interrupt)
		_ = p.cmd.Wait()
		_ = p.logFile.Close()
	})
}

// Kill ends the process at once, as a crash would.
func (p *Process) Kill() {
	p.once.Do(func() {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
		_ = p.logFile.Close()
	})
}

// Tail returns the last n lines of the process's log.
func (p *Process) Tail(n int) string {
	b, _ := os.ReadFile(p.Log)
	return TailLines(string(b), n)
}

// HTTPStatus GETs url and returns the status code, or 0 when nothing answers.
func HTTPStatus(ctx context.Context, url string) int {
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

// TailLines returns the last n lines of s.
func TailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// FreePort returns a loopback port nobody listens on now.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func loopbackURL(port int, path string) string {
	return "http://127.0.0.1:" + strconv.Itoa(port) + path
}
