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
//
// A fault that breaks the control plane's watches (see watchFaults)
// explains any Service's failures while it is under way and Slack.Traffic
// after it ends, and after that, for at most Slack.Component, for as long
// as a pod of the Service's namespace that stopped being Ready during it
// or after it is not Ready again, and Slack.Traffic after that: the
// EndpointSlice controller and kube-proxy come back to the API server
// with their watches' back-off, and until they do, a pod taken out of
// service (its grace counted from the kubelet's Ready False, as the
// daemon counts it) still gets new connections.
func (c *Checker) affects(service string, at time.Time) func(*window) bool {
	namespace, _, _ := strings.Cut(service, "/")
	return func(w *window) bool {
		settled := !w.ended || at.Sub(w.end) <= c.slack.Traffic
		if slices.Contains(watchFaults, w.kind) {
			return settled || c.endpointsMayLag(namespace, w, at)
		}
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

// watchFaults are the kinds that break every watch on the API server:
// the components that program the Services (the EndpointSlice
// controller, kube-proxy) are behind the pods' readiness until their
// watches are back.
var watchFaults = []Fault{RestartAPIServer}

// endpointsMayLag says whether, at at, after w ended, a Service of
// namespace may still have an endpoint kube-proxy has not caught up with:
// a pod of it stopped being Ready at or after w's start and is not Ready
// again, or has been for at most Slack.Traffic, and w ended at most
// Slack.Component before.
func (c *Checker) endpointsMayLag(namespace string, w *window, at time.Time) bool {
	if !w.ended || at.Sub(w.end) > c.slack.Component {
		return false
	}
	for _, p := range c.pods {
		if p.gone || p.namespace != namespace || p.readyUntil.Before(w.start) {
			continue
		}
		if !p.ready || at.Sub(p.readySince) <= c.slack.Traffic {
			return true
		}
	}
	return false
}
