package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"time"
)

// controlFilePoll is how often the control file is read. Polling rather than
// inotify, because kubelet updates ConfigMap volumes by swapping symlinks.
const controlFilePoll = 200 * time.Millisecond

// controlFile watches a file of key=value lines and hands its controls to
// apply whenever its content changes. A missing file counts as empty.
type controlFile struct {
	path  string
	log   *slog.Logger
	apply func(controls)

	last    []byte
	lastErr string
}

// poll reads the file once and applies it if its content changed.
func (f *controlFile) poll() {
	content, err := os.ReadFile(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		content, err = nil, nil
	}
	if err != nil {
		// Logged once per distinct error: the file is read five times a second.
		if msg := err.Error(); msg != f.lastErr {
			f.log.Error("read control file", "path", f.path, "err", err)
			f.lastErr = msg
		}
		return
	}
	f.lastErr = ""
	if bytes.Equal(content, f.last) {
		return
	}
	f.last = content
	c, err := parseControlFile(content)
	if err != nil {
		f.log.Error("control file rejected", "path", f.path, "err", err)
		return
	}
	f.apply(c)
}

// run polls until ctx is done.
func (f *controlFile) run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		f.poll()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// parseControlFile reads lines of key=value; blank lines and lines starting
// with # are skipped.
func parseControlFile(content []byte) (controls, error) {
	var kvs []keyValue
	n := 0
	for line := range strings.SplitSeq(string(content), "\n") {
		n++
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			return controls{}, fmt.Errorf("line %d %q: want key=value", n, line)
		}
		kvs = append(kvs, keyValue{strings.TrimSpace(key), strings.TrimSpace(value)})
	}
	return parseControls(kvs)
}
