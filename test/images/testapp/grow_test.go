package main

import (
	"context"
	"testing"
	"time"
)

func TestGrowthReachesLimitAndStops(t *testing.T) {
	const limit = 256 << 10
	a := testApp(t, options{growRate: 4 << 20, growLimit: limit})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go (&grower{state: a.state, ballast: a.ballast}).run(ctx)

	eventually(t, "memory to reach the limit", func() bool { return a.ballast.heldBytes() >= limit })
	time.Sleep(300 * time.Millisecond) // three more ticks
	if got := a.ballast.heldBytes(); got != limit {
		t.Errorf("held %d bytes after reaching the limit, want %d", got, limit)
	}
}

func TestGrowTicks(t *testing.T) {
	tests := []struct {
		name  string
		rate  int64
		limit int64
		ticks int
		want  int64
	}{
		{name: "no growth", rate: 0, ticks: 10, want: 0},
		{name: "one second", rate: 1 << 20, ticks: 10, want: 1 << 20},
		{name: "half a second", rate: 1000, ticks: 5, want: 500},
		{name: "rate below the tick count still grows", rate: 3, ticks: 10, want: 3},
		{name: "limit", rate: 1 << 20, limit: 300 << 10, ticks: 10, want: 300 << 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := testApp(t, options{growRate: tt.rate, growLimit: tt.limit})
			g := &grower{state: a.state, ballast: a.ballast}
			for range tt.ticks {
				g.tick()
			}
			if got := a.ballast.heldBytes(); got != tt.want {
				t.Errorf("held %d bytes after %d ticks, want %d", got, tt.ticks, tt.want)
			}
		})
	}
}

func TestFreeReleases(t *testing.T) {
	a := testApp(t, options{growRate: 1 << 20})
	g := &grower{state: a.state, ballast: a.ballast}
	for range 5 {
		g.tick()
	}
	if a.ballast.heldBytes() == 0 {
		t.Fatal("nothing held before free")
	}
	a.apply(controls{growRate: new(int64(0)), free: true}, "test")
	if got := a.ballast.heldBytes(); got != 0 {
		t.Errorf("held %d bytes after free, want 0", got)
	}
	g.tick()
	if got := a.ballast.heldBytes(); got != 0 {
		t.Errorf("held %d bytes after free at rate 0, want 0", got)
	}
	if n := len(a.ballast.chunks); n != 0 {
		t.Errorf("%d chunks still referenced after free", n)
	}
}

func TestBallastTouchesEveryPage(t *testing.T) {
	b := &ballast{log: discardLog()}
	b.grow(3*4096+1, 0)
	chunk := b.chunks[0]
	for i := 0; i < len(chunk); i += 4096 {
		if chunk[i] == 0 {
			t.Fatalf("byte %d of the chunk was never written", i)
		}
	}
}

func TestGrowthStartsAfterItsDelay(t *testing.T) {
	a := testApp(t, options{growRate: 4 << 20})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	start := time.Now()
	go (&grower{state: a.state, ballast: a.ballast, after: 500 * time.Millisecond}).run(ctx)
	eventually(t, "memory to grow", func() bool { return a.ballast.heldBytes() > 0 })
	if took := time.Since(start); took < 500*time.Millisecond {
		t.Errorf("memory grew %s after the start, before its 500ms delay", took)
	}
}

func TestGrowthIsFreedEveryPeriod(t *testing.T) {
	const limit = 256 << 10
	a := testApp(t, options{growRate: 1 << 20, growLimit: limit})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go (&grower{state: a.state, ballast: a.ballast, freeEvery: 400 * time.Millisecond}).run(ctx)
	// Up to the limit, down at the free, and up again: a sawtooth.
	eventually(t, "memory to reach the limit", func() bool { return a.ballast.heldBytes() >= limit })
	eventually(t, "memory to be freed", func() bool { return a.ballast.heldBytes() < limit })
	eventually(t, "memory to grow again", func() bool { return a.ballast.heldBytes() >= limit })
}

// TestWarmUpFollowsItsCurve: 63% of the size after one time constant, 95%
// after three, never more than the size.
func TestWarmUpFollowsItsCurve(t *testing.T) {
	a := testApp(t, options{})
	w := &warmer{ballast: a.ballast, size: 100 << 10, tau: 10 * time.Second}
	for _, step := range []struct {
		at   time.Duration
		want int64
	}{{0, 0}, {10 * time.Second, 64729}, {30 * time.Second, 97301}, {5 * time.Second, 97301}, {time.Hour, 100 << 10}} {
		w.at(step.at)
		if got := a.ballast.heldBytes(); got != step.want {
			t.Errorf("after %s: held %d bytes, want %d", step.at, got, step.want)
		}
	}
}
