package invariant

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// keepOutOfService are the faults that may keep a pod out of service
// after its request: the manager, which puts it back, is down or cannot
// write. Their time is added to Slack.Held, and so is a lost node's that
// every manager replica ran on (their anti-affinity is only preferred).
var keepOutOfService = []Fault{KillLeader, RolloutManager, RestartAPIServer, SlowAPI, WebhookUnreachable}

// keepsManagerAway says whether w may keep a pod out of service.
func keepsManagerAway(w *window) bool {
	return w.takesManager || slices.Contains(keepOutOfService, w.kind)
}

// A heldEpisode is a stretch of time during which a pod was out of
// service with no request in flight.
type heldEpisode struct {
	start     time.Time
	violation *Violation
}

// outOfService says whether p is held out of its Services by Rejuv's
// readiness gate while nothing is being recreated: not gone, not being
// deleted, KruisePodReady False and no request in flight.
func (c *Checker) outOfService(p *pod) bool {
	return !p.gone && !terminating(p.obj) &&
		podCondition(p.obj, v1beta1.PodReadyCondition) == corev1.ConditionFalse &&
		c.activeRequest(p) == nil
}

// judgeHeld opens or closes p's episode out of service. An episode is a
// violation once it has lasted longer than Slack.Held, not counting the
// time a fault of keepOutOfService was under way.
func (c *Checker) judgeHeld(p *pod, at time.Time) {
	held, e := c.outOfService(p), p.held
	switch {
	case held && e == nil:
		e = &heldEpisode{start: at}
		p.held = e
		var check func(now time.Time, finishing bool)
		check = func(now time.Time, finishing bool) {
			if p.held != e {
				return
			}
			stalled := c.stalledBy(keepsManagerAway, e.start, now)
			out := now.Sub(e.start) - stalled
			if out <= c.slack.Held {
				if !finishing {
					c.after(now.Add(c.slack.Held-out), check)
				}
				return
			}
			e.violation = c.violate(HeldOutOfService, e.start, p.subject(),
				fmt.Sprintf("out of service (%s False) with no request in flight for more than %s (%.1fs of faults that keep the manager away)",
					v1beta1.PodReadyCondition, c.slack.Held, stalled.Seconds()),
				c.heldEvidence(p, e)...)
		}
		c.after(at.Add(c.slack.Held), check)
	case !held && e != nil:
		p.held = nil
		if e.violation != nil {
			e.violation.Evidence = append(e.violation.Evidence,
				fmt.Sprintf("back in service or gone %s, %.1fs after", c.offset(at), at.Sub(e.start).Seconds()))
		}
	}
}

// heldEvidence is p, its gate's condition, its latest request and the
// faults that may have kept it out.
func (c *Checker) heldEvidence(p *pod, e *heldEpisode) []string {
	evidence := []string{c.describePod(p), "out of service since " + c.offset(e.start)}
	for _, cond := range p.obj.Status.Conditions {
		if cond.Type == v1beta1.PodReadyCondition {
			evidence = append(evidence, fmt.Sprintf("condition %s: reason %s, message %q", cond.Type, orDash(cond.Reason), cond.Message))
		}
	}
	if rs := c.requestsOf(p); len(rs) > 0 {
		evidence = append(evidence, "latest request: "+c.describeRequest(rs[len(rs)-1]))
	}
	for _, w := range c.windows {
		if w.start.After(c.now) {
			break
		}
		if !w.ended || !w.end.Before(e.start) {
			evidence = append(evidence, c.describeWindow(w))
		}
	}
	return evidence
}
