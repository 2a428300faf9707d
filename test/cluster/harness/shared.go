package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Shared starts or reuses the project's shared cluster for one test binary
// (call it from TestMain). Several test binaries may share it at once; the
// returned release function must be called when the binary's tests are done:
// if this binary started the cluster, release waits for the other users and
// then stops it, and a cluster that was already running (make up, make test)
// is left running.
func Shared(ctx context.Context) (*Cluster, func(), error) {
	cfg, err := DefaultConfig()
	if err != nil {
		return nil, nil, err
	}
	c, err := Up(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	usersDir := cfg.path("users")
	if err := os.MkdirAll(usersDir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("register cluster user: %w", err)
	}
	me := filepath.Join(usersDir, userID(os.Getpid()))
	if err := os.WriteFile(me, nil, 0o644); err != nil {
		return nil, nil, fmt.Errorf("register cluster user: %w", err)
	}
	release := func() {
		_ = os.Remove(me)
		if !c.Started {
			return
		}
		waitForOtherUsers(usersDir, 30*time.Minute)
		if err := Down(context.Background(), cfg); err != nil {
			fmt.Fprintf(cfg.out(), "harness: %v\n", err)
		}
	}
	return c, release, nil
}

// userID names a test process by PID and start time, so that a file left by
// a crashed process is recognised as stale.
func userID(pid int) string {
	st, _ := procStartTime(pid)
	return fmt.Sprintf("%d-%d", pid, st)
}

func waitForOtherUsers(dir string, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if len(liveUsers(dir)) == 0 {
			return
		}
		time.Sleep(time.Second)
	}
}

// liveUsers are the PIDs of the processes registered in dir that still
// run; the files of those that do not are removed.
func liveUsers(dir string) []int {
	entries, _ := os.ReadDir(dir)
	var live []int
	for _, e := range entries {
		pidStr, stStr, _ := strings.Cut(e.Name(), "-")
		pid, _ := strconv.Atoi(pidStr)
		st, _ := strconv.ParseUint(stStr, 10, 64)
		if (&Process{PID: pid, StartTime: st}).Alive() {
			live = append(live, pid)
		} else {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	return live
}
