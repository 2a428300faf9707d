package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestControlFileReappliedOnChange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "control")
	a := testApp(t, defaultOptions(t))
	var logs syncBuffer
	f := &controlFile{path: path, log: slogTo(&logs), apply: func(c controls) { a.apply(c, "control file") }}
	write := func(content string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	steps := []struct {
		name      string
		write     *string // nil: leave the file as it is
		http      *controls
		wantReady bool
		wantLive  bool
	}{
		{name: "no file yet", wantReady: true, wantLive: true},
		{name: "file written", write: new("# make it unready\nready=false\n\nlive = true\n"), wantReady: false, wantLive: true},
		{name: "http overrides", http: &controls{ready: new(true)}, wantReady: true, wantLive: true},
		{name: "unchanged file is not re-applied", wantReady: true, wantLive: true},
		{name: "changed file is re-applied", write: new("ready=false\nlive=false\n"), wantReady: false, wantLive: false},
		{name: "bad file is rejected whole", write: new("ready=true\nlive=sometimes\n"), wantReady: false, wantLive: false},
		{name: "line without =", write: new("ready=true\nlive\n"), wantReady: false, wantLive: false},
		{name: "fixed file applies", write: new("ready=true\nlive=true\n"), wantReady: true, wantLive: true},
	}
	for _, s := range steps {
		if s.write != nil {
			write(*s.write)
		}
		if s.http != nil {
			a.apply(*s.http, "http")
		}
		f.poll()
		if got := a.state.get(); got.ready != s.wantReady || got.live != s.wantLive {
			t.Errorf("%s: ready=%t live=%t, want ready=%t live=%t", s.name, got.ready, got.live, s.wantReady, s.wantLive)
		}
	}
	for _, want := range []string{`live=\"sometimes\"`, `line 2 \"live\"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("logs do not name the bad line %s:\n%s", want, logs.String())
		}
	}
}

func TestControlFileWatched(t *testing.T) {
	path := filepath.Join(t.TempDir(), "control")
	a := testApp(t, defaultOptions(t))
	f := &controlFile{path: path, log: discardLog(), apply: func(c controls) { a.apply(c, "control file") }}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go f.run(ctx, 10*time.Millisecond)

	if err := os.WriteFile(path, []byte("ready=false\ngrowLimit=1Mi\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the control file to be applied", func() bool {
		s := a.state.get()
		return !s.ready && s.growLimit == 1<<20
	})
	// Replaced the way kubelet updates a ConfigMap volume: a new file renamed over.
	next := path + ".new"
	if err := os.WriteFile(next, []byte("ready=true\nexit=4\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(next, path); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-a.exits:
		if code != 4 {
			t.Errorf("exit code %d, want 4", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the changed control file did not ask to exit")
	}
	if !a.state.get().ready {
		t.Error("the changed control file did not make testapp ready")
	}
}
