package harness

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestProcessStartAliveStop(t *testing.T) {
	p, err := startProcess(t.TempDir(), spec{name: "sleeper", path: "/bin/sleep", args: []string{"60"}})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Alive() {
		t.Fatalf("sleeper not alive after start; log:\n%s", p.LogTail(5))
	}
	if err := p.Stop(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if p.Alive() {
		t.Fatal("sleeper alive after Stop")
	}
	if err := p.Stop(time.Second); err != nil {
		t.Fatalf("second Stop = %v, want nil", err)
	}
}

func TestProcessWithReusedPIDIsNotAlive(t *testing.T) {
	// The harness's own PID with a different start time is another process.
	st, err := procStartTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if !(&Process{PID: os.Getpid(), StartTime: st}).Alive() {
		t.Fatal("own process not alive")
	}
	if (&Process{PID: os.Getpid(), StartTime: st + 1}).Alive() {
		t.Fatal("process with another start time counted as alive")
	}
}

func TestWaitReadyReportsExitWithLogTail(t *testing.T) {
	p, err := startProcess(t.TempDir(), spec{name: "failing", path: "/bin/sh", args: []string{"-c", "echo boom: bad flag >&2; exit 3"}})
	if err != nil {
		t.Fatal(err)
	}
	err = p.waitReady(context.Background(), 10*time.Second, func(context.Context) error { return errors.New("not yet") })
	if err == nil || !strings.Contains(err.Error(), "failing exited during start-up") || !strings.Contains(err.Error(), "boom: bad flag") {
		t.Fatalf("waitReady() = %v, want exit with the log tail", err)
	}
}

func TestStartProcessMissingBinary(t *testing.T) {
	_, err := startProcess(t.TempDir(), spec{name: "ghost", path: "/nonexistent/ghost"})
	if err == nil || !strings.Contains(err.Error(), `start ghost: binary "/nonexistent/ghost" is missing`) {
		t.Fatalf("startProcess() = %v, want a missing-binary error", err)
	}
}

func TestCheckPortsNamesComponentAndHolder(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c := validConfig(t)
	c.Ports = Ports{Etcd: 31001, EtcdPeer: 31002, APIServer: l.Addr().(*net.TCPAddr).Port,
		ControllerManager: 31004, Scheduler: 31005, Kubelet: 31006, KubeletHealthz: 31007, KubeProxyHealthz: 31008, KubeProxyMetrics: 31009}
	err = checkPorts(c)
	if err == nil {
		t.Fatal("checkPorts() = nil with the apiserver port taken")
	}
	for _, want := range []string{"for kube-apiserver (config.Ports.APIServer) is already in use", "by pid "} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("checkPorts() = %v, lacks %q", err, want)
		}
	}
}

func TestLockFileExcludes(t *testing.T) {
	path := t.TempDir() + "/lock"
	unlock, err := lockFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	// flock is per open file description, so a second open in this
	// process contends like another process would.
	if _, err := lockFile(ctx, path); err == nil {
		t.Fatal("second lock taken while the first is held")
	}
	unlock()
	unlock2, err := lockFile(context.Background(), path)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	unlock2()
}

func TestUnescapeMountPath(t *testing.T) {
	if got := unescapeMountPath(`/a\040b/c`); got != "/a b/c" {
		t.Fatalf("unescapeMountPath = %q", got)
	}
}

// TestAPausedProcessStopsOnItsSIGTERM: a process left paused (SIGSTOP, as
// Pause leaves it) is stopped by its SIGTERM within the grace, not by the
// SIGKILL after it.
func TestAPausedProcessStopsOnItsSIGTERM(t *testing.T) {
	p, err := startProcess(t.TempDir(), spec{name: "paused", path: "/bin/sh", args: []string{"-c", "trap 'exit 0' TERM; while :; do sleep 0.1; done"}})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if err := syscall.Kill(p.PID, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := p.Stop(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took >= 5*time.Second {
		t.Errorf("stopping the paused process took %s: it waited out the grace for SIGKILL", took)
	}
}
