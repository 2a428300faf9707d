package harness

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAClusterInUseIsNotReplacedWhileItLooksStale: a soak stops the
// cluster's parts on purpose; another process that comes up meanwhile
// finds it unhealthy, but, as a process still uses it, refuses rather
// than tearing it down and starting another under the soak. Once no
// user is left, the stale record is cleaned up as before.
func TestAClusterInUseIsNotReplacedWhileItLooksStale(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("Up needs root")
	}
	cfg, err := DefaultConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Dir = t.TempDir()
	st := &state{KubernetesVersion: cfg.KubernetesVersion, Runtime: cfg.Runtime, Nodes: cfg.NodeCount, Ready: true,
		Processes: []*Process{{Name: "containerd-2", PID: 1 << 22}}}
	if err := st.save(cfg.Dir); err != nil {
		t.Fatal(err)
	}
	users := cfg.path("users")
	if err := os.MkdirAll(users, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(users, userID(os.Getpid())), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(users, "4194304-1"), nil, 0o644); err != nil {
		t.Fatal(err)
	}

	_, err = Up(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "not replacing it under them") || !strings.Contains(err.Error(), "containerd-2") {
		t.Fatalf("Up beside a user of a cluster that looks stale: %v; want a refusal naming what looks wrong", err)
	}
	if got, err := loadState(cfg.Dir); err != nil || got == nil {
		t.Errorf("the cluster's record after the refusal: %v, %v; want it kept", got, err)
	}
	if live := liveUsers(users); len(live) != 1 || live[0] != os.Getpid() {
		t.Errorf("live users %v, want this process alone (the dead one's file removed)", live)
	}
}
