package invariant

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// sameBurst is how close one Service's unexplained failures must follow
// each other to be reported as one violation with a count.
const sameBurst = time.Second

// maxBurstErrors bounds the errors a burst's violation quotes.
const maxBurstErrors = 3

// A clientEpisode is a burst of one Service's unexplained failures.
type clientEpisode struct {
	violation *Violation
	last      time.Time
	failures  int
}

// clientFailed counts a client's failure: apart, under the earliest
// fault of the traffic faults under way or ended at most Slack.Traffic
// before it (one aimed at a node only for a Service with a pod there);
// otherwise as a violation, one per burst of a Service.
func (c *Checker) clientFailed(o ClientFailed) {
	c.tally.clientFailures++
	if w := c.explaining(o.At, c.slack.Traffic, c.traffic, c.servedFrom(o.Service)); w != nil {
		c.tally.explained[w.kind]++
		return
	}
	line := fmt.Sprintf("failed %s: %s", c.offset(o.At), o.Err)
	e := c.clients[o.Service]
	if e != nil && o.At.Sub(e.last) <= sameBurst {
		e.last = o.At
		e.failures++
		e.violation.What = fmt.Sprintf("%d client requests failed within %.1fs with no fault under way to explain them",
			e.failures, o.At.Sub(e.violation.At).Seconds())
		if e.failures <= maxBurstErrors {
			e.violation.Evidence = append(e.violation.Evidence, line)
		}
		return
	}
	v := c.violate(ClientRequests, o.At, "service "+o.Service,
		"a client request failed with no fault under way to explain it", line)
	c.clients[o.Service] = &clientEpisode{violation: v, last: o.At, failures: 1}
}

// servedFrom says whether a fault's window may explain a failure of the
// Service named namespace/name: a fault aimed at a node explains only the
// failures of a Service of a namespace with a pod on that node.
func (c *Checker) servedFrom(service string) func(*window) bool {
	namespace, _, _ := strings.Cut(service, "/")
	return func(w *window) bool {
		if !slices.Contains(nodeFaults, w.kind) {
			return true
		}
		for _, p := range c.pods {
			if !p.gone && p.namespace == namespace && p.obj.Spec.NodeName == w.target {
				return true
			}
		}
		return false
	}
}
