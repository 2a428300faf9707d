package main

import (
	"context"
	"math"
	"time"
)

// warmer grows the ballast as an app warming up does (a cache filling, a
// heap growing to its size): size bytes reached along a saturating curve of
// time constant tau, 63% of them after tau, 95% after three.
type warmer struct {
	ballast *ballast
	size    int64
	tau     time.Duration
	// grown is what the warm-up has added so far.
	grown int64
}

// at grows the ballast to the curve's value after elapsed.
func (w *warmer) at(elapsed time.Duration) {
	target := int64(float64(w.size) * (1 - math.Exp(-elapsed.Seconds()/w.tau.Seconds())))
	if n := target - w.grown; n > 0 {
		w.ballast.grow(n, 0)
		w.grown += n
	}
}

// run follows the curve, growTicks times a second, until it is within a
// byte of its size or ctx is done.
func (w *warmer) run(ctx context.Context) {
	start := time.Now()
	t := time.NewTicker(time.Second / growTicks)
	defer t.Stop()
	for w.grown < w.size-1 {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			w.at(time.Since(start))
		}
	}
}
