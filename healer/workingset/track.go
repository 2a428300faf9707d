package workingset

import (
	"time"

	"github.com/rejuv-dev/rejuv/policy"
)

// Track is one container's window as the sampler keeps it, for replays
// of recorded samples (the backtest): a sample goes into its slot as the
// sampler puts it, a sample of another instance starts the window again,
// and so does a recreation the replay simulates.
type Track struct {
	w        *Window
	interval time.Duration
	slots    int
	// instance is the runtime's ID of the instance the window is of;
	// samples at or before from are not counted.
	instance string
	from     time.Time
}

// NewTrack is an empty track whose window spans span, one slot per
// interval (the sampler's Window and Interval).
func NewTrack(interval, span time.Duration) *Track {
	return &Track{interval: interval, slots: slotsFor(interval, span)}
}

// Add counts the working set of instance sampled at at: a sample of
// another instance than the window's starts the window again, as the
// sampler's windows start with each instance; a sample at or before the
// window's start (Restart) is not counted.
func (t *Track) Add(instance string, at time.Time, bytes int64) {
	if !at.After(t.from) {
		return
	}
	if t.w == nil || instance != t.instance {
		t.w, t.instance = newWindow("", t.slots, 0), instance
	}
	t.w.add(at.UnixNano()/int64(t.interval), bytes)
}

// Restart empties the window: the container was recreated at at, and
// only samples after that count, as for a new instance.
func (t *Track) Restart(at time.Time) {
	t.w, t.from = nil, at
}

// Summary is what the rules see of the window, nil before its first
// sample.
func (t *Track) Summary() *policy.MemoryWindow {
	if t.w == nil {
		return nil
	}
	return t.w.summary(t.interval)
}
