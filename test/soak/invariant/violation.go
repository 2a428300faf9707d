package invariant

import (
	"fmt"
	"strings"
	"time"
)

// A Violation is one broken promise and what shows it.
type Violation struct {
	// Invariant is the promise broken.
	Invariant Invariant
	// At is when it was broken, as near as the observations tell: the
	// start of an episode (a budget exceeded, a pod held out), the
	// observation that showed it (a restart, a request first seen, a
	// failure), or the first observation past a deadline.
	At time.Time
	// Subject is the object it is about: "pod ns/name", "request
	// ns/name", "policy ns/name", "service ns/name".
	Subject string
	// What says in one sentence what went wrong.
	What string
	// Evidence are the observations that show it, one a line: objects,
	// times as offsets from the soak's first observation, containerIDs,
	// restartCounts, UIDs, phases.
	Evidence []string
}

// String is the violation on one line, then its evidence indented.
func (v Violation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] %s: %s", v.Invariant, v.Subject, v.What)
	for _, e := range v.Evidence {
		fmt.Fprintf(&b, "\n    %s", e)
	}
	return b.String()
}

// violate records a violation and returns it, so that an episode still
// going can update its evidence.
func (c *Checker) violate(inv Invariant, at time.Time, subject, what string, evidence ...string) *Violation {
	v := &Violation{Invariant: inv, At: at, Subject: subject, What: what, Evidence: evidence}
	c.violations = append(c.violations, v)
	return v
}

// offset is t as the time since the soak's first observation, "+123.4s":
// the runner's clock, comparable across every kind of observation.
func (c *Checker) offset(t time.Time) string {
	return fmt.Sprintf("+%.1fs", t.Sub(c.origin).Seconds())
}

// shortID is a containerID without its runtime prefix, cut to the 12
// characters that tell containers apart; "-" for none.
func shortID(id string) string {
	if _, rest, ok := strings.Cut(id, "://"); ok {
		id = rest
	}
	if id == "" {
		return "-"
	}
	return id[:min(len(id), 12)]
}
