package workingset

import (
	"math"
	"testing"
	"time"
)

const mib = 1 << 20

// fill adds one sample per slot from slot 1000 on: f gives the working set
// at seconds since the first.
func fill(w *Window, slots int, interval time.Duration, f func(sec float64) float64) {
	for i := range slots {
		w.add(int64(1000+i), int64(f(float64(i)*interval.Seconds())))
	}
}

func TestWindowFitsTheLineTheRulesRead(t *testing.T) {
	interval := 30 * time.Second
	hour := 120
	for _, tc := range []struct {
		name string
		f    func(sec float64) float64
		// wantSlope in MiB/h, with the smallest r2 and the largest.
		wantSlope    float64
		minR2, maxR2 float64
	}{
		{"a steady leak of 60Mi/h", func(s float64) float64 { return 100*mib + s*60*mib/3600 }, 60, 0.999, 1},
		{"flat", func(float64) float64 { return 100 * mib }, 0, 0, 0},
		// A garbage-collected heap: up 40Mi over 5 min, then back.
		{"a sawtooth", func(s float64) float64 { return 100*mib + math.Mod(s, 300)*40*mib/300 }, -1, 0, 0.05},
		// A cache warming up: one step of 200Mi after 10 minutes.
		{"a step", func(s float64) float64 {
			if s < 600 {
				return 100 * mib
			}
			return 300 * mib
		}, -1, 0, 0.6},
	} {
		w := newWindow("app", hour, 1)
		fill(w, hour, interval, tc.f)
		m := w.summary(interval)
		if m.Samples != hour || m.WindowSeconds != 3600 {
			t.Errorf("%s: %d samples over %gs, want %d over 3600s", tc.name, m.Samples, m.WindowSeconds, hour)
		}
		slope := m.SlopeBytesPerSecond * 3600 / mib
		if tc.wantSlope >= 0 && math.Abs(slope-tc.wantSlope) > 1 {
			t.Errorf("%s: slope %.2f MiB/h, want %.0f", tc.name, slope, tc.wantSlope)
		}
		if m.R2 < tc.minR2 || m.R2 > tc.maxR2 {
			t.Errorf("%s: r2 %.3f, want within [%g, %g]", tc.name, m.R2, tc.minR2, tc.maxR2)
		}
		if want := int64(tc.f(float64(hour-1) * 30)); m.WorkingSetBytes != want {
			t.Errorf("%s: working set %d, want the newest sample %d", tc.name, m.WorkingSetBytes, want)
		}
	}
}

// A slow leak on a large heap: sums of squared bytes would lose it.
func TestWindowKeepsASlowLeakOnALargeHeap(t *testing.T) {
	interval := 30 * time.Second
	w := newWindow("app", 120, 1)
	fill(w, 120, interval, func(s float64) float64 { return 8<<30 + s*20*mib/3600 })
	m := w.summary(interval)
	if slope := m.SlopeBytesPerSecond * 3600 / mib; math.Abs(slope-20) > 0.1 || m.R2 < 0.999 {
		t.Errorf("slope %.3f MiB/h with r2 %.4f, want 20 MiB/h with r2 about 1", slope, m.R2)
	}
}

func TestWindowSlots(t *testing.T) {
	interval := 30 * time.Second
	w := newWindow("app", 4, 1)
	if w.summary(interval) != nil {
		t.Fatal("an empty window has a summary")
	}
	w.add(10, 10*mib)
	if m := w.summary(interval); m.Samples != 1 || m.WindowSeconds != 30 || m.SlopeBytesPerSecond != 0 {
		t.Errorf("one sample: %+v", m)
	}
	w.add(10, 11*mib) // the same slot again: replaced
	w.add(12, 12*mib) // slot 11 missed
	m := w.summary(interval)
	if m.Samples != 2 || m.WindowSeconds != 90 || m.WorkingSetBytes != 12*mib {
		t.Errorf("two slots of three: %+v", m)
	}
	if slope := m.SlopeBytesPerSecond; math.Abs(slope-float64(mib)/60) > 1 {
		t.Errorf("slope %g B/s, want 1 MiB a minute", slope)
	}
	w.add(8, 99*mib) // four slots before the newest: out of the window, dropped
	if m := w.summary(interval); m.Samples != 2 {
		t.Errorf("a sample older than the window was kept: %+v", m)
	}
	w.add(20, 20*mib)
	if m := w.summary(interval); m.Samples != 1 || m.WindowSeconds != 30 {
		t.Errorf("a jump past the window leaves only the new sample: %+v", m)
	}
	w.add(21, 0) // no working set: no sample
	if m := w.summary(interval); m.Samples != 1 {
		t.Errorf("a zero working set counted as a sample: %+v", m)
	}
}

// The slopes of the parabola through the window at its first and last
// sample: the same for a leak, falling along a warm-up.
func TestWindowTellsThePaceAtItsEndFromItsStart(t *testing.T) {
	interval := 30 * time.Second
	for _, tc := range []struct {
		name string
		f    func(sec float64) float64
		// ok judges start and end, in MiB/h.
		ok   func(start, end float64) bool
		want string
	}{
		{"a steady leak of 60Mi/h", func(s float64) float64 { return 100*mib + s*60*mib/3600 },
			func(start, end float64) bool { return math.Abs(start-60) < 0.1 && math.Abs(end-60) < 0.1 }, "60 and 60"},
		// 300Mi with a time constant of 2 hours: 150Mi/h at the start,
		// e^-0.5 of that (91Mi/h) an hour later.
		{"a warm-up of 2 hours", func(s float64) float64 { return 100*mib + 300*mib*(1-math.Exp(-s/7200)) },
			func(start, end float64) bool {
				return math.Abs(start-150) < 5 && math.Abs(end-91) < 5 && math.Abs(end/start-math.Exp(-0.5)) < 0.02
			}, "about 150 and 91"},
		// Flat for the first 40 minutes, growing 90Mi/h after: the curve
		// falls at the start and climbs at the end.
		{"a leak that started 20 minutes ago", func(s float64) float64 { return 100*mib + max(s-2370, 0)*90*mib/3600 },
			func(start, end float64) bool { return start < 0 && end > 80 }, "below 0 and above 80"},
		// Growing 90Mi/h for 40 minutes, flat since.
		{"growth that stopped 20 minutes ago", func(s float64) float64 { return 100*mib + min(s, 2370)*90*mib/3600 },
			func(start, end float64) bool { return start > 90 && end <= 0 }, "above 90 and at most 0"},
	} {
		w := newWindow("app", 120, 1)
		fill(w, 120, interval, tc.f)
		m := w.summary(interval)
		if start, end := m.StartSlopeBytesPerSecond*3600/mib, m.EndSlopeBytesPerSecond*3600/mib; !tc.ok(start, end) {
			t.Errorf("%s: %.1f MiB/h at the start, %.1f at the end; want %s", tc.name, start, end, tc.want)
		}
	}

	// curveSamples samples on a parabola: 5Mi a slot at the first, 23Mi
	// at the last.
	perSlot := func(bps float64) float64 { return bps * interval.Seconds() / mib }
	w := newWindow("app", 120, 1)
	for i := range int64(curveSamples) {
		w.add(1000+i, 100*mib+5*i*mib+i*i*mib)
	}
	m := w.summary(interval)
	if start, end := perSlot(m.StartSlopeBytesPerSecond), perSlot(m.EndSlopeBytesPerSecond); math.Abs(start-5) > 1e-6 || math.Abs(end-23) > 1e-6 {
		t.Errorf("%d samples: %g MiB a slot at the start, %g at the end; want 5 and 23", curveSamples, start, end)
	}
	// Fewer: the line's slope at both ends.
	w = newWindow("app", 120, 1)
	for i, b := range []int64{100 * mib, 110 * mib, 130 * mib} {
		w.add(int64(1000+i), b)
	}
	m = w.summary(interval)
	if m.StartSlopeBytesPerSecond != m.SlopeBytesPerSecond || m.EndSlopeBytesPerSecond != m.SlopeBytesPerSecond || perSlot(m.SlopeBytesPerSecond) != 15 {
		t.Errorf("three samples: %g and %g B/s at the ends, line %g; want the line's, 15Mi a slot", m.StartSlopeBytesPerSecond, m.EndSlopeBytesPerSecond, m.SlopeBytesPerSecond)
	}
}

// The slope of the window's last sixth (of 120 slots, 20), at least its
// last latestSlots slots: a one-time load that ended is flat there, a
// leak keeps its pace.
func TestWindowTellsWhetherTheGrowthGoesOn(t *testing.T) {
	interval := 30 * time.Second
	for _, tc := range []struct {
		name string
		f    func(sec float64) float64
		// latest in MiB/h.
		latest float64
	}{
		{"a steady leak of 60Mi/h", func(s float64) float64 { return 100*mib + s*60*mib/3600 }, 60},
		// 100Mi over 20 minutes from minute 30, flat for the last 10
		// minutes (slots 100-119): the one-time load.
		{"a load that ended 10 minutes ago", func(s float64) float64 { return 100*mib + min(max(s-1800, 0), 1200)*300*mib/3600 }, 0},
		// Growing 90Mi/h over the last 10 minutes only.
		{"a rise of the last 10 minutes", func(s float64) float64 { return 100*mib + max(s-2970, 0)*90*mib/3600 }, 90},
	} {
		w := newWindow("app", 120, 1)
		fill(w, 120, interval, tc.f)
		m := w.summary(interval)
		if latest := m.LatestSlopeBytesPerSecond * 3600 / mib; math.Abs(latest-tc.latest) > 1 {
			t.Errorf("%s: latest %.1f MiB/h, want %.0f", tc.name, latest, tc.latest)
		}
	}

	// A short window's last sixth is its last latestSlots slots: of 12
	// samples, the last four, growing 10Mi a slot after a flat start.
	w := newWindow("app", 120, 1)
	for i := range int64(12) {
		w.add(1000+i, 100*mib+max(i-8, 0)*10*mib)
	}
	m := w.summary(interval)
	if want := 10.0 * mib / 30; math.Abs(m.LatestSlopeBytesPerSecond-want) > 1e-6 {
		t.Errorf("12 samples: latest %g B/s, want %g (the last %d)", m.LatestSlopeBytesPerSecond, want, latestSlots)
	}
}
