package main

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runAsync starts run on a free local port and returns its exit code channel.
func runAsync(ctx context.Context, t *testing.T, o options, signals chan os.Signal) <-chan int {
	t.Helper()
	o.listen = "127.0.0.1:0"
	done := make(chan int, 1)
	go func() { done <- run(ctx, o, discardLog(), signals) }()
	return done
}

func TestRunExits(t *testing.T) {
	tests := []struct {
		name     string
		opts     options
		signal   os.Signal
		wantCode int
	}{
		{name: "exit after", opts: options{exitAfter: 50 * time.Millisecond, exitCode: 3}, wantCode: 3},
		{name: "SIGTERM", signal: syscall.SIGTERM, wantCode: 0},
		{name: "SIGINT with SIGTERM ignored", opts: options{ignoreSigterm: true}, signal: syscall.SIGINT, wantCode: 0},
		{name: "SIGTERM during startup delay", opts: options{startupDelay: time.Hour}, signal: syscall.SIGTERM, wantCode: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			signals := make(chan os.Signal, 1)
			done := runAsync(t.Context(), t, tt.opts, signals)
			if tt.signal != nil {
				signals <- tt.signal
			}
			select {
			case code := <-done:
				if code != tt.wantCode {
					t.Errorf("exit code %d, want %d", code, tt.wantCode)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("run did not exit")
			}
		})
	}
}

func TestRunIgnoresSIGTERM(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	signals := make(chan os.Signal, 1)
	done := runAsync(ctx, t, options{ignoreSigterm: true}, signals)
	signals <- syscall.SIGTERM
	select {
	case code := <-done:
		t.Fatalf("exited with %d on SIGTERM while ignoring it", code)
	case <-time.After(300 * time.Millisecond):
	}
	cancel()
	<-done
}

// TestRunUnreadyAfter: --unready-after turns readiness off on its own, as
// a wedged app would, and says so in the log.
func TestRunUnreadyAfter(t *testing.T) {
	var log syncBuffer
	o := options{listen: "127.0.0.1:0", ready: true, live: true, unreadyAfter: 50 * time.Millisecond}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan int, 1)
	go func() { done <- run(ctx, o, slogTo(&log), make(chan os.Signal)) }()
	eventually(t, "readiness turned off by --unready-after", func() bool {
		return strings.Contains(log.String(), "--unready-after") && strings.Contains(log.String(), "ready")
	})
	cancel()
	<-done
}
