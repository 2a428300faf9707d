package invariant

import (
	"slices"
	"testing"
	"time"
)

func TestTimersFireInOrderBeforeTheObservationAfterThem(t *testing.T) {
	c := NewChecker(DefaultSlack(), nil)
	var fired []string
	var note func(name string) func(time.Time, bool)
	note = func(name string) func(time.Time, bool) {
		return func(now time.Time, finishing bool) {
			fired = append(fired, name)
			if name == "again" && !finishing {
				c.after(now, note("later"))
			}
		}
	}
	c.after(at(3), note("c"))
	c.after(at(1), note("a"))
	c.after(at(2), note("b1"))
	c.after(at(2), note("b2"))
	c.after(at(5), note("again"))
	c.after(at(9), note("end"))
	c.expire(at(2))
	if want := []string{"a"}; !slices.Equal(fired, want) {
		t.Fatalf("fired %v by +2s, want %v: a timer due at the observation waits", fired, want)
	}
	c.expire(at(6))
	if want := []string{"a", "b1", "b2", "c", "again"}; !slices.Equal(fired, want) {
		t.Fatalf("fired %v by +6s, want %v", fired, want)
	}
	c.expireAll(at(7))
	if want := []string{"a", "b1", "b2", "c", "again", "later", "end"}; !slices.Equal(fired, want) {
		t.Fatalf("fired %v at the end, want %v", fired, want)
	}
	c.after(at(8), note("never"))
	if len(c.timers) != 0 {
		t.Error("a timer set once the soak is finishing is kept")
	}
}
