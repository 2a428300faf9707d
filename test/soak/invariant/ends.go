package invariant

import (
	"fmt"
	"time"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// stopsRequests are the faults during which a request cannot end on
// time: the API takes no writes, or the node's daemon is gone. Their time
// is added to a request's deadline.
var stopsRequests = []Fault{RestartAPIServer, SlowAPI, LoseNode}

// deadlineOf is r's activeDeadlineSeconds, or Slack.DefaultDeadline.
func (c *Checker) deadlineOf(r *request) time.Duration {
	if s := r.obj.Spec.ActiveDeadlineSeconds; s != nil {
		return v1beta1.SecondsDuration(*s)
	}
	return c.slack.DefaultDeadline
}

// watchDeadline holds r, first seen in flight at at, to being seen ended
// within its deadline plus Slack.RequestEnds, counted from at, not
// counting the time a fault of stopsRequests was under way. Judged at
// every observation from the earliest it could be late.
func (c *Checker) watchDeadline(r *request, at time.Time) {
	limit := c.deadlineOf(r) + c.slack.RequestEnds
	var check func(now time.Time, finishing bool)
	check = func(now time.Time, finishing bool) {
		if !r.active() {
			return
		}
		stalled := c.stalled(stopsRequests, r.firstSeen, now)
		running := now.Sub(r.firstSeen) - stalled
		if running <= limit {
			if !finishing {
				c.after(now.Add(limit-running), check)
			}
			return
		}
		r.reported[reportedOverdue] = true
		c.violate(RequestEnds, now, r.subject(),
			fmt.Sprintf("not seen to end %.1fs after it was first seen: deadline %s plus %s, and %.1fs of faults that stop requests",
				now.Sub(r.firstSeen).Seconds(), c.deadlineOf(r), c.slack.RequestEnds, stalled.Seconds()),
			c.requestEvidence(r)...)
	}
	c.after(at.Add(limit), check)
}

// requestGoneEarly holds a request deleted before it was seen to end to
// its pod going too, before or within Slack.Attribution after it. A pod
// never seen counts as gone.
func (c *Checker) requestGoneEarly(r *request, at time.Time) {
	c.after(at.Add(c.slack.Attribution), func(time.Time, bool) {
		p := c.podOf(r)
		if p == nil || (p.gone && !p.goneAt.After(r.goneAt.Add(c.slack.Attribution))) || r.reported[reportedOverdue] {
			return
		}
		c.violate(RequestEnds, r.goneAt, r.subject(), "deleted before it was seen to end, while its pod stayed",
			c.requestEvidence(r)...)
	})
}

// requestEvidence is r, its pod, and the faults under way while it ran.
func (c *Checker) requestEvidence(r *request) []string {
	evidence := []string{c.describeRequest(r)}
	if p := c.podOf(r); p != nil {
		evidence = append(evidence, c.describePod(p))
	}
	for _, w := range c.windows {
		if w.start.After(c.lastSeen(r)) {
			break
		}
		if !w.ended || !w.end.Before(r.firstSeen) {
			evidence = append(evidence, c.describeWindow(w))
		}
	}
	return evidence
}

// lastSeen is when r was seen to end or go, or the latest time the
// checker knows of while it has not.
func (c *Checker) lastSeen(r *request) time.Time {
	if end, ok := r.ended(); ok {
		return end
	}
	return c.now
}
