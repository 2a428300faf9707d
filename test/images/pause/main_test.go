package main

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

func TestRunExitsOnTerminationSignals(t *testing.T) {
	for _, sig := range []os.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			signals := make(chan os.Signal, 3)
			signals <- syscall.SIGCHLD
			signals <- syscall.SIGCHLD
			signals <- sig
			done := make(chan struct{})
			go func() {
				run(signals)
				close(done)
			}()
			select {
			case <-done:
				if len(signals) != 0 {
					t.Errorf("run returned with %d signals unread, want it to read up to %s", len(signals), sig)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("run did not return on %s", sig)
			}
		})
	}
}

func TestReapCollectsZombies(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "exit 0")
	if err := cmd.Start(); err != nil {
		t.Fatalf("start a child: %v", err)
	}
	pid := cmd.Process.Pid
	// The child's /proc entry lasts until it is reaped: then it is gone.
	deadline := time.Now().Add(10 * time.Second)
	for {
		reap()
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); errors.Is(err, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("child %d was not reaped", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Wait(); err == nil {
		t.Error("Wait succeeded on a child that reap should already have collected")
	}
}
