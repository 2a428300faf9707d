package invariant

import (
	"container/heap"
	"time"
)

// A timer is a judgement the checker defers: a grace to wait out, an
// episode that may last too long. It fires at the first observation after
// due, before that observation is applied (the state it judges held until
// then), or at Finish. finishing says no observation will follow: a timer
// that would wait longer must decide or let go.
type timer struct {
	due  time.Time
	seq  int
	fire func(now time.Time, finishing bool)
}

// timers are the deferred judgements, soonest first; among equal dues, in
// the order they were set.
type timers []*timer

func (t timers) Len() int { return len(t) }
func (t timers) Less(i, j int) bool {
	if !t[i].due.Equal(t[j].due) {
		return t[i].due.Before(t[j].due)
	}
	return t[i].seq < t[j].seq
}
func (t timers) Swap(i, j int) { t[i], t[j] = t[j], t[i] }

// Push and Pop are heap.Interface's; use after and expire.
func (t *timers) Push(x any) { *t = append(*t, x.(*timer)) }

// Pop is heap.Interface's.
func (t *timers) Pop() any {
	old := *t
	last := old[len(old)-1]
	old[len(old)-1] = nil
	*t = old[:len(old)-1]
	return last
}

// after defers fire until due. Once the soak is finishing there is no
// later observation to wait for, so nothing more is deferred.
func (c *Checker) after(due time.Time, fire func(now time.Time, finishing bool)) {
	if c.finishing {
		return
	}
	c.timerSeq++
	heap.Push(&c.timers, &timer{due: due, seq: c.timerSeq, fire: fire})
}

// expire fires every timer due before now. A timer may set another, due
// at now at the earliest, which waits for a later observation.
func (c *Checker) expire(now time.Time) {
	for len(c.timers) > 0 && c.timers[0].due.Before(now) {
		t := heap.Pop(&c.timers).(*timer)
		t.fire(now, false)
	}
}

// expireAll fires every timer left, at now, as the soak ends.
func (c *Checker) expireAll(now time.Time) {
	c.finishing = true
	for len(c.timers) > 0 {
		t := heap.Pop(&c.timers).(*timer)
		t.fire(now, true)
	}
}
