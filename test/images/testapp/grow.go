package main

import (
	"context"
	"time"
)

// growTicks is how many times a second memory grows: the rate is spread over
// them so that the working set rises smoothly.
const growTicks = 10

// grower grows the ballast at the state's current rate up to its current limit.
type grower struct {
	state   *state
	ballast *ballast
	// after delays the first growth; freeEvery, when set, frees the
	// ballast that often.
	after, freeEvery time.Duration
	// owed carries the bytes of earlier ticks not yet allocated, so rates that
	// do not divide by growTicks are honoured over a second.
	owed int64
}

// tick does one tick's growth.
func (g *grower) tick() {
	s := g.state.get()
	if s.growRate == 0 {
		g.owed = 0
		return
	}
	g.owed += s.growRate
	step := g.owed / growTicks
	g.owed -= step * growTicks
	if step > 0 {
		g.ballast.grow(step, s.growLimit)
	}
}

// run ticks until ctx is done, from after on.
func (g *grower) run(ctx context.Context) {
	if g.after > 0 {
		select {
		case <-ctx.Done():
			return
		case <-time.After(g.after):
		}
	}
	t := time.NewTicker(time.Second / growTicks)
	defer t.Stop()
	var free <-chan time.Time
	if g.freeEvery > 0 {
		f := time.NewTicker(g.freeEvery)
		defer f.Stop()
		free = f.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			g.tick()
		case <-free:
			g.ballast.free()
		}
	}
}
