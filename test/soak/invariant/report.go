package invariant

import (
	"slices"
	"time"
)

// Report is what a soak's observations came to.
type Report struct {
	// Violations are every broken promise, by At.
	Violations []Violation
	// ByInvariant counts the violations of each invariant, every one
	// listed.
	ByInvariant map[Invariant]int
	// Requests counts the requests seen; Succeeded and Failed those seen
	// to end with result Succeeded and otherwise; Unfinished those still
	// in flight at the end and not yet late.
	Requests, Succeeded, Failed, Unfinished int
	// RunsCompleted counts the runs seen Completed.
	RunsCompleted int
	// Restarts counts the container restarts seen in the soak's pods.
	Restarts int
	// ClientFailures counts the clients' failed requests; Explained
	// those put down to a fault, by the kind of the fault.
	ClientFailures int
	Explained      map[Fault]int
	// Faults counts the faults started, by kind.
	Faults map[Fault]int
}

// tally are the counts the report gives beside the violations.
type tally struct {
	requests, succeeded, failed int
	runsCompleted               int
	restarts                    int
	clientFailures              int
	explained                   map[Fault]int
}

// Finish makes the judgements still deferred at at, the soak's end: a
// grace not yet over is cut short (a restart not yet attributed, a status
// not yet matched, a run not yet counted are judged on what was seen),
// while a request, a pod out of service or a budget exceeded is judged
// only on the time it has had. The checker takes no observation after.
func (c *Checker) Finish(at time.Time) Report {
	if !c.started {
		c.origin, c.started = at, true
	}
	c.now = at
	c.expire(at)
	c.expireAll(at)
	rep := Report{
		ByInvariant:    map[Invariant]int{},
		Requests:       c.tally.requests,
		Succeeded:      c.tally.succeeded,
		Failed:         c.tally.failed,
		RunsCompleted:  c.tally.runsCompleted,
		Restarts:       c.tally.restarts,
		ClientFailures: c.tally.clientFailures,
		Explained:      c.tally.explained,
		Faults:         c.faults,
	}
	for _, r := range c.requests {
		if r.active() && !r.reported[reportedOverdue] {
			rep.Unfinished++
		}
	}
	for _, inv := range Invariants {
		rep.ByInvariant[inv] = 0
	}
	for _, v := range c.violations {
		rep.Violations = append(rep.Violations, *v)
		rep.ByInvariant[v.Invariant]++
	}
	slices.SortStableFunc(rep.Violations, func(a, b Violation) int { return a.At.Compare(b.At) })
	return rep
}
