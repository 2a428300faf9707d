package workingset

import (
	"math"
	"time"

	"github.com/rejuv-dev/rejuv/policy"
)

// Window is one container's working set over the last slots: a ring of
// fixed slots, one per sampling interval, each holding the working set in
// KiB (0 for no sample). A slot's time is implied by its place, so a
// sample costs 4 bytes: a window of an hour at 15 s is 240 slots, 960
// bytes.
type Window struct {
	// name is the container's.
	name string
	// kib holds slot s at kib[s % len(kib)].
	kib []uint32
	// newest is the slot of the newest sample; -1 before the first.
	newest int64
	// latest is the newest sample to the byte.
	latest int64
	// container identifies the container instance the samples are of
	// (a hash of its ID); a new instance starts an empty window.
	container uint64
}

// newWindow is an empty window of n slots.
func newWindow(name string, n int, container uint64) *Window {
	return &Window{name: name, kib: make([]uint32, n), newest: -1, container: container}
}

// add records the working set sampled in slot; a slot older than the
// window is dropped, and a second sample in one slot replaces the first.
func (w *Window) add(slot int64, bytes int64) {
	if bytes <= 0 || slot < 0 {
		return
	}
	n := int64(len(w.kib))
	if w.newest >= 0 && slot <= w.newest-n {
		return
	}
	if slot > w.newest {
		// The slots skipped since the newest hold no sample.
		from := max(w.newest+1, slot-n+1)
		for s := from; s < slot; s++ {
			w.kib[s%n] = 0
		}
		w.newest, w.latest = slot, bytes
	} else if slot == w.newest {
		w.latest = bytes
	}
	w.kib[slot%n] = uint32(min((bytes+1023)/1024, math.MaxUint32))
}

// summary is what the rules see of the window: the newest working set, a
// least-squares line through the samples, the slopes at the window's
// first and last sample of a least-squares parabola through them (a leak
// keeps its pace, a warm-up slows down), and the slope of the line
// through the samples of its last sixth, at least its last latestSlots
// slots (a rise that has ended is flat there). A window slot stands for
// its interval, so WindowSeconds is the time from the start of the oldest
// sample's slot to the end of the newest's. R2 is 0 when the samples do
// not vary; a slope is 0 with fewer than two samples; with fewer than
// curveSamples, the parabola's are the line's.
func (w *Window) summary(interval time.Duration) *policy.MemoryWindow {
	if w.newest < 0 {
		return nil
	}
	n := int64(len(w.kib))
	from := max(w.newest-n+1, 0)
	// Two passes, the second over deviations from the means: sums of
	// squared gigabytes would cancel away a slow leak's variance.
	var count, oldest int64
	var mx, my float64
	for s := from; s <= w.newest; s++ {
		if v := w.kib[s%n]; v != 0 {
			if count == 0 {
				oldest = s
			}
			count++
			mx += float64(s - w.newest)
			my += float64(v)
		}
	}
	span := w.newest - oldest + 1
	m := &policy.MemoryWindow{
		WorkingSetBytes: w.latest,
		Samples:         int(count),
		WindowSeconds:   float64(span) * interval.Seconds(),
	}
	if count < 2 {
		return m
	}
	mx /= float64(count)
	my /= float64(count)
	// In slots and KiB; scaled to seconds and bytes at the end.
	latestFrom := max(min(oldest+(5*span+5)/6, w.newest-latestSlots+1), oldest)
	var whole, latest fit
	var curve parabola
	for s := oldest; s <= w.newest; s++ {
		if v := w.kib[s%n]; v != 0 {
			dx, dy := float64(s-w.newest)-mx, float64(v)-my
			whole.add(dx, dy)
			curve.add(dx, dy)
			if s >= latestFrom {
				latest.add(dx, dy)
			}
		}
	}
	perSecond := 1024 / interval.Seconds()
	m.SlopeBytesPerSecond = whole.slope() * perSecond
	m.R2 = whole.r2()
	m.StartSlopeBytesPerSecond, m.EndSlopeBytesPerSecond = m.SlopeBytesPerSecond, m.SlopeBytesPerSecond
	if b, c, ok := curve.solve(); ok && count >= curveSamples {
		// The slope b + 2*c*x at the oldest sample and at the newest.
		m.StartSlopeBytesPerSecond = (b + 2*c*(float64(oldest-w.newest)-mx)) * perSecond
		m.EndSlopeBytesPerSecond = (b - 2*c*mx) * perSecond
	}
	m.LatestSlopeBytesPerSecond = latest.slope() * perSecond
	return m
}

// curveSamples is the fewest samples the parabola is fitted through: the
// slopes of one through fewer say more about the samples' noise (a
// source's value is up to an interval old) than about the growth's pace,
// and the window gives the line's slope at both ends instead.
const curveSamples = 10

// latestSlots is the fewest slots the latest slope is fitted through: a
// short window's last sixth may hold one or two samples, and a source
// whose value changes less often than the window's slots (metrics-server
// scrapes every 15 s or so) may give them the same value.
const latestSlots = 4

// fit accumulates the sums of a least-squares line through points.
type fit struct {
	n, x, y, xx, yy, xy float64
}

func (f *fit) add(x, y float64) {
	f.n++
	f.x += x
	f.y += y
	f.xx += x * x
	f.yy += y * y
	f.xy += x * y
}

// slope is the line's, 0 with fewer than two points.
func (f *fit) slope() float64 {
	d := f.n*f.xx - f.x*f.x
	if f.n < 2 || d <= 0 {
		return 0
	}
	return (f.n*f.xy - f.x*f.y) / d
}

// r2 is the line's coefficient of determination, 0 when the points do
// not vary.
func (f *fit) r2() float64 {
	sxx, syy, sxy := f.n*f.xx-f.x*f.x, f.n*f.yy-f.y*f.y, f.n*f.xy-f.x*f.y
	if sxx <= 0 || syy <= 0 {
		return 0
	}
	return math.Min(1, sxy*sxy/(sxx*syy))
}

// parabola accumulates the sums of a least-squares parabola
// y = a + b*x + c*x*x through points: its slope b + 2*c*x tells a growth
// that keeps its pace (the same slope at both ends) from one that slows
// down (a warm-up's slope falls along the window) better than lines
// through parts of the window, each fitted through fewer samples.
type parabola struct {
	n, x, xx, xxx, xxxx, y, xy, xxy float64
}

func (p *parabola) add(x, y float64) {
	xx := x * x
	p.n++
	p.x += x
	p.xx += xx
	p.xxx += xx * x
	p.xxxx += xx * xx
	p.y += y
	p.xy += x * y
	p.xxy += xx * y
}

// solve gives the parabola's b and c, by Cramer's rule over its normal
// equations; not ok with fewer than three points, or points on fewer than
// three distinct x.
func (p *parabola) solve() (b, c float64, ok bool) {
	m := [3][3]float64{{p.n, p.x, p.xx}, {p.x, p.xx, p.xxx}, {p.xx, p.xxx, p.xxxx}}
	d := det3(m)
	if p.n < 3 || d <= 0 {
		return 0, 0, false
	}
	mb, mc := m, m
	for i, r := range [3]float64{p.y, p.xy, p.xxy} {
		mb[i][1], mc[i][2] = r, r
	}
	return det3(mb) / d, det3(mc) / d, true
}

// det3 is the determinant of a 3x3 matrix.
func det3(m [3][3]float64) float64 {
	return m[0][0]*(m[1][1]*m[2][2]-m[1][2]*m[2][1]) -
		m[0][1]*(m[1][0]*m[2][2]-m[1][2]*m[2][0]) +
		m[0][2]*(m[1][0]*m[2][1]-m[1][1]*m[2][0])
}
