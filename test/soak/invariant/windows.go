package invariant

import (
	"slices"
	"time"
)

// A window is one injected fault, from its start to its end; an unended
// fault lasts until the soak's end.
type window struct {
	id     int
	kind   Fault
	target string
	start  time.Time
	end    time.Time
	ended  bool
	// takesManager says the fault took every manager replica away at
	// once: it lost the node all of them ran on.
	takesManager bool
}

// until is when w ends, or at when it has not ended by then.
func (w *window) until(at time.Time) time.Time {
	if w.ended && w.end.Before(at) {
		return w.end
	}
	return at
}

// describeWindow is w as a line of evidence.
func (c *Checker) describeWindow(w *window) string {
	end := "not ended"
	if w.ended {
		end = "ended " + c.offset(w.end)
	}
	return "fault " + string(w.kind) + " on " + w.target + " from " + c.offset(w.start) + ", " + end
}

// faultStarted opens a fault's window.
func (c *Checker) faultStarted(o FaultStarted) {
	w := &window{id: o.ID, kind: o.Kind, target: o.Target, start: o.At}
	w.takesManager = o.Kind == LoseNode && c.everyManagerOn(o.Target)
	c.windows = append(c.windows, w)
	c.windowsByID[o.ID] = w
	c.faults[o.Kind]++
}

// faultEnded closes a fault's window; an unknown ID (a fault begun before
// the checker) is ignored.
func (c *Checker) faultEnded(o FaultEnded) {
	if w := c.windowsByID[o.ID]; w != nil && !w.ended {
		w.end, w.ended = o.At, true
	}
}

// explaining is the earliest begun fault that can account for what was
// seen at: begun by then and not ended more than grace before it, of one
// of kinds, and accepted by match (nil accepts any).
func (c *Checker) explaining(at time.Time, grace time.Duration, kinds []Fault, match func(*window) bool) *window {
	for _, w := range c.windows {
		if w.start.After(at) {
			break
		}
		if !slices.Contains(kinds, w.kind) || (w.ended && at.Sub(w.end) > grace) {
			continue
		}
		if match == nil || match(w) {
			return w
		}
	}
	return nil
}

// stalled is how long, within [from, to], a fault of one of kinds was
// under way: overlapping faults count once.
func (c *Checker) stalled(kinds []Fault, from, to time.Time) time.Duration {
	return c.stalledBy(func(w *window) bool { return slices.Contains(kinds, w.kind) }, from, to)
}

// stalledBy is stalled for the faults that counts accepts.
func (c *Checker) stalledBy(counts func(*window) bool, from, to time.Time) time.Duration {
	var total time.Duration
	var cur, curEnd time.Time
	open := false
	for _, w := range c.windows {
		if w.start.After(to) {
			break
		}
		if !counts(w) {
			continue
		}
		start, end := w.start, w.until(to)
		if start.Before(from) {
			start = from
		}
		if !end.After(start) {
			continue
		}
		if open && !start.After(curEnd) {
			if end.After(curEnd) {
				curEnd = end
			}
			continue
		}
		if open {
			total += curEnd.Sub(cur)
		}
		cur, curEnd, open = start, end, true
	}
	if open {
		total += curEnd.Sub(cur)
	}
	return total
}
