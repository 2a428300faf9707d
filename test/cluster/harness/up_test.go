package harness

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// isolatedConfig is an instance of its own (directory, ports, bridge and
// subnet) that can run beside the shared cluster, for tests that make Up fail.
func isolatedConfig(t *testing.T, offset int) Config {
	t.Helper()
	if testing.Short() {
		t.Skip("starts real cluster components; run without -short (make test)")
	}
	if os.Geteuid() != 0 {
		t.Fatal("the harness tests need root, like the cluster itself")
	}
	cfg, err := DefaultConfig()
	if err != nil {
		t.Fatal(err)
	}
	// Kept short: containerd's socket path must fit in a sockaddr_un.
	dir, err := os.MkdirTemp("", "rejuv-h")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	cfg.Dir = dir
	cfg.RuntimeSocket = ""
	cfg.NodeCount = 1
	cfg.NodeName = fmt.Sprintf("rejuv-test-%d", offset)
	cfg.Bridge = fmt.Sprintf("rejuvt%d", offset)
	cfg.PodSubnet = netip.MustParsePrefix(fmt.Sprintf("10.213.%d.0/24", 10+offset))
	cfg.ServiceSubnet = netip.MustParsePrefix(fmt.Sprintf("10.213.%d.0/24", 140+offset))
	base := 31000 + 10*offset
	cfg.Ports = Ports{Etcd: base, EtcdPeer: base + 1, APIServer: base + 2, ControllerManager: base + 3,
		Scheduler: base + 4, Kubelet: base + 5, KubeletHealthz: base + 6, KubeProxyHealthz: base + 7, KubeProxyMetrics: base + 8, Registry: base + 9}
	cfg.Out = testWriter{t}
	return cfg
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// assertNothingRunning checks that a failed Up left no process, bridge,
// listener or state behind.
func assertNothingRunning(t *testing.T, cfg Config) {
	t.Helper()
	if pids := processesMentioning(cfg.Dir); len(pids) > 0 {
		t.Errorf("processes still running with %s in their command line: %v", cfg.Dir, pids)
	}
	if _, err := net.InterfaceByName(cfg.Bridge); err == nil {
		t.Errorf("bridge %s still exists", cfg.Bridge)
	}
	for _, p := range cfg.portList() {
		l, err := net.Listen("tcp", fmt.Sprintf(":%d", p.port))
		if err != nil {
			t.Errorf("port %d (%s) still taken: %v", p.port, p.component, err)
			continue
		}
		_ = l.Close()
	}
	if st, err := loadState(cfg.Dir); err != nil || st != nil {
		t.Errorf("state left behind: %+v, %v", st, err)
	}
}

func processesMentioning(s string) []string {
	var out []string
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range cmdlines {
		b, err := os.ReadFile(f)
		if err == nil && strings.Contains(string(b), s) {
			out = append(out, strings.Split(f, "/")[2]+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

func TestUpFailsCleanlyWhenAPortIsTaken(t *testing.T) {
	t.Parallel()
	cfg := isolatedConfig(t, 1)
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", cfg.Ports.Etcd))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()

	_, err = Up(context.Background(), cfg)
	if err == nil {
		t.Fatal("Up succeeded with etcd's port taken")
	}
	t.Logf("Up() error, as a user sees it:\n%v", err)
	want := fmt.Sprintf("port %d for etcd (config.Ports.Etcd) is already in use by pid %d", cfg.Ports.Etcd, os.Getpid())
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("Up() = %v\nwant it to contain %q", err, want)
	}
	_ = l.Close()
	assertNothingRunning(t, cfg)
}

func TestUpFailsCleanlyWhenABinaryIsMissing(t *testing.T) {
	t.Parallel()
	cfg := isolatedConfig(t, 2)
	cfg.Tools.KubeBinDir = t.TempDir()
	if err := os.WriteFile(filepath.Join(cfg.Tools.KubeBinDir, "kubelet"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}

	_, err := Up(context.Background(), cfg)
	if err == nil {
		t.Fatal("Up succeeded without kube-apiserver")
	}
	t.Logf("Up() error, as a user sees it:\n%v", err)
	want := fmt.Sprintf("REJUV_KUBE_BIN_DIR=%s lacks kube-apiserver, kube-controller-manager, kube-scheduler", cfg.Tools.KubeBinDir)
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("Up() = %v\nwant it to contain %q", err, want)
	}
	assertNothingRunning(t, cfg)
}

func TestUpStopsEverythingWhenAComponentFailsToStart(t *testing.T) {
	t.Parallel()
	cfg := isolatedConfig(t, 3)
	cfg.ExtraArgs = map[string][]string{"kube-controller-manager": {"--no-such-flag"}}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	_, err := Up(ctx, cfg)
	if err == nil {
		t.Fatal("Up succeeded with a broken kube-controller-manager")
	}
	t.Logf("Up() error, as a user sees it:\n%v", err)
	for _, want := range []string{"kube-controller-manager exited during start-up", "unknown flag: --no-such-flag"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Up() = %v\nwant it to contain %q", err, want)
		}
	}
	// etcd and kube-apiserver had started; they must be gone again.
	assertNothingRunning(t, cfg)
}

func TestUpCleansUpAStaleInstanceFirst(t *testing.T) {
	t.Parallel()
	cfg := isolatedConfig(t, 4)
	if err := os.MkdirAll(cfg.logDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	// A previous run left a process behind and lost another one.
	leftover, err := startProcess(cfg.logDir(), spec{name: "etcd", path: "/bin/sleep", args: []string{"600"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = leftover.Stop(time.Second) })
	dead, err := startProcess(cfg.logDir(), spec{name: "kube-apiserver", path: "/bin/true"})
	if err != nil {
		t.Fatal(err)
	}
	<-dead.exited
	stale := &state{KubernetesVersion: cfg.KubernetesVersion, Runtime: cfg.Runtime, Ready: true, Processes: []*Process{leftover, dead}}
	if err := stale.save(cfg.Dir); err != nil {
		t.Fatal(err)
	}
	// Make the fresh start fail early, so that the test needs no kubelet.
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", cfg.Ports.Scheduler))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()

	var out strings.Builder
	cfg.Out = &out
	_, err = Up(context.Background(), cfg)
	t.Logf("Up() output:\n%s\nerror: %v", out.String(), err)
	wantOut := fmt.Sprintf("found a stale cluster (not running: kube-apiserver (pid %d)); cleaning it up", dead.PID)
	if !strings.Contains(out.String(), wantOut) {
		t.Errorf("Up() output lacks %q", wantOut)
	}
	if leftover.Alive() {
		t.Errorf("the stale instance's process (pid %d) is still running", leftover.PID)
	}
	if err == nil || !strings.Contains(err.Error(), "for kube-scheduler") {
		t.Errorf("Up() = %v, want the port check of the fresh start to fail", err)
	}
	_ = l.Close()
	assertNothingRunning(t, cfg)
}
