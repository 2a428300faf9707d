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
// traffic fault that affects its Service (see affects); otherwise as a
// violation, one per burst of a Service.
func (c *Checker) clientFailed(o ClientFailed) {
	c.tally.clientFailures++
	if w := c.explaining(o.At, forever, c.traffic, c.affects(o.Service, o.At)); w != nil {
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

// forever is a grace no ended window outlasts: the caller's match judges
// how long each one explains.
const forever = time.Duration(1<<63 - 1)

// affects says whether a fault's window may explain a failure, at at, of
// the Service named namespace/name. A fault aimed at the whole cluster
// explains any Service's failures while it is under way and Slack.Traffic
// after it ends. A fault aimed at a node explains only the failures of a
// Service of a namespace with a pod on that node, and after it ends, for
// as long as such a pod that stopped being Ready during it is not Ready
// again (at most Slack.Component: the kubelet back, the pod's containers
// started again, its probes passing) and Slack.Traffic after that.
func (c *Checker) affects(service string, at time.Time) func(*window) bool {
	namespace, _, _ := strings.Cut(service, "/")
	return func(w *window) bool {
		settled := !w.ended || at.Sub(w.end) <= c.slack.Traffic
		if !slices.Contains(nodeFaults, w.kind) {
			return settled
		}
		served := false
		for _, p := range c.pods {
			if p.gone || p.namespace != namespace || p.obj.Spec.NodeName != w.target {
				continue
			}
			served = true
			if settled || at.Sub(w.end) > c.slack.Component || p.readyUntil.Before(w.start) {
				continue
			}
			if !p.ready || at.Sub(p.readySince) <= c.slack.Traffic {
				settled = true
			}
		}
		return served && settled
	}
}
