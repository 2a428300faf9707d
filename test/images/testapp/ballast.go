package main

import (
	"log/slog"
	"os"
	"runtime/debug"
	"sync"
)

// ballast is memory held on purpose. Every page of it is written so that it is
// resident: a container's working set grows with it, not just its address space.
type ballast struct {
	log *slog.Logger

	mu     sync.Mutex
	chunks [][]byte
	held   int64
}

// grow adds n bytes, or fewer so as not to pass limit (0 means no limit).
func (b *ballast) grow(n, limit int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if limit > 0 {
		n = min(n, limit-b.held)
	}
	if n <= 0 {
		return
	}
	chunk := make([]byte, n)
	page := os.Getpagesize()
	for i := 0; i < len(chunk); i += page {
		chunk[i] = 1
	}
	b.chunks = append(b.chunks, chunk)
	b.held += n
	if b.held == limit {
		b.log.Info("memory growth reached its limit", "held", formatBytes(b.held))
	}
}

// free drops the held memory and hands it back to the kernel at once, so that
// the working set falls now rather than at the runtime's leisure.
func (b *ballast) free() {
	b.mu.Lock()
	held := b.held
	b.chunks, b.held = nil, 0
	b.mu.Unlock()
	debug.FreeOSMemory()
	b.log.Info("memory freed", "released", formatBytes(held))
}

func (b *ballast) heldBytes() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held
}
