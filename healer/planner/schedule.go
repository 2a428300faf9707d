package planner

import (
	"time"

	"github.com/rejuv-dev/rejuv/healer/policyspec"
)

// Tick is what a policy's schedule asks for at a moment.
type Tick struct {
	// Due is the latest fire time not yet handled, zero for none.
	Due time.Time
	// Missed is the latest fire time skipped because it is older than the
	// starting deadline, zero for none.
	Missed time.Time
	// Next is the first fire time after the moment.
	Next time.Time
}

// maxTicks bounds each walk over fire times, for a schedule that fires
// often after a long time without the manager.
const maxTicks = 10_000

// TickAt works out the fire times between the last handled one (or the
// policy's creation), since, and now: a fire time later than the starting
// deadline allows is missed, the latest one within it is due.
func TickAt(s *policyspec.Schedule, since, now time.Time) Tick {
	t := Tick{Next: s.Next(now)}
	earliest := now.Add(-s.StartingDeadline)
	x := s.Next(since)
	for i := 0; x.Before(earliest) && i < maxTicks; i++ {
		t.Missed, x = x, s.Next(x)
	}
	if x.Before(earliest) {
		// Too many to walk: the ones left are missed too.
		x = s.Next(earliest.Add(-time.Nanosecond))
	}
	for i := 0; !x.After(now) && i < maxTicks; i++ {
		t.Due, x = x, s.Next(x)
	}
	return t
}
