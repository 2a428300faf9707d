package main

import (
	"bytes"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"
)

func discardLog() *slog.Logger { return slogTo(io.Discard) }

func slogTo(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

// syncBuffer is a log destination that tests read while goroutines write.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func testApp(t *testing.T, o options) *app {
	t.Helper()
	a := newApp(o, discardLog(), "test-host")
	a.startedAt = time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	return a
}

// defaultOptions are the flag defaults.
func defaultOptions(t *testing.T) options {
	t.Helper()
	o, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// eventually waits up to a generous deadline for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
