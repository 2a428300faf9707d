package invariant

import (
	"fmt"
	"slices"
	"time"
)

// A disruption is a policy's request that took a Ready pod while a
// PodDisruptionBudget covering it seemed to allow no disruption; the
// budget's pods are watched for Slack.Skew in case the manager saw one of
// them healthy before the soak did.
type disruption struct {
	r *request
	p *pod
	b *pdb
	// healthy are the budget's pods healthy besides p when the request
	// was first seen; desired the budget's desiredHealthy then.
	healthy, desired int
	evidence         []string
	cleared          bool
}

// judgeDisruption checks a policy's request, when first seen in flight,
// against the PodDisruptionBudgets covering its pod, when the pod was
// Ready (taking it disrupts) and the policy respects budgets. Requests
// made by hand are not the manager's to hold back.
func (c *Checker) judgeDisruption(r *request, p *pod, at time.Time) {
	if r.policy == "" || p == nil || p.gone || !p.ready || !c.respectsBudgets(r.policy) {
		return
	}
	for _, b := range c.namespace(p.namespace).pdbs {
		if !b.covers(p) {
			continue
		}
		healthy := c.healthyBesides(b, p) + c.deletedJustBefore(b, p, r, at)
		desired := int(b.obj.Status.DesiredHealthy)
		if healthy >= desired {
			continue
		}
		d := &disruption{r: r, p: p, b: b, healthy: healthy, desired: desired, evidence: c.describeCovered(b, p)}
		c.disruptions = append(c.disruptions, d)
		c.after(at.Add(c.slack.Skew), func(time.Time, bool) {
			if d.cleared {
				return
			}
			d.cleared = true
			st := d.b.obj.Status
			evidence := []string{c.describeRequest(d.r), c.describePod(d.p),
				fmt.Sprintf("PodDisruptionBudget %s: desiredHealthy %d, currentHealthy %d, disruptionsAllowed %d, expectedPods %d as last seen",
					d.b.key(), st.DesiredHealthy, st.CurrentHealthy, st.DisruptionsAllowed, st.ExpectedPods),
				"its pods when the request was first seen:"}
			evidence = append(evidence, d.evidence...)
			c.violate(DisruptionBudget, d.r.firstSeen, d.r.subject(),
				fmt.Sprintf("took Ready pod %s while PodDisruptionBudget %s allowed no disruption: %d pods healthy besides it, desiredHealthy %d, for %s",
					d.p.key(), d.b.key(), d.healthy, d.desired, c.slack.Skew), evidence...)
		})
	}
}

// recheckDisruptions clears the disruptions whose budget now has enough
// healthy pods besides the one taken.
func (c *Checker) recheckDisruptions() {
	if len(c.disruptions) == 0 {
		return
	}
	c.disruptions = slices.DeleteFunc(c.disruptions, func(d *disruption) bool {
		if !d.cleared {
			d.cleared = c.healthyBesides(d.b, d.p) >= int(d.b.obj.Status.DesiredHealthy)
		}
		return d.cleared
	})
}

// healthyBesides counts the pods b covers that are healthy besides
// except: not gone, not terminating, Ready and with no request in flight.
func (c *Checker) healthyBesides(b *pdb, except *pod) int {
	n := 0
	for _, p := range c.namespace(b.namespace).pods {
		if p != except && !terminating(p.obj) && p.ready && b.covers(p) && c.activeRequest(p) == nil {
			n++
		}
	}
	return n
}

// deletedJustBefore counts the pods b covers, besides except, that were
// Ready with no request in flight when their deletion was first seen,
// and whose deletion may have come after r's decision: first seen at most
// Slack.Skew before at, or taken by the API server in a later second than
// r's creation, however late the soak's watches delivered the two (after
// an API server restart each watch comes back in its own time: seed 14's
// hour, +66.0 s). The manager may have charged the budget before that
// deletion (by someone else, and not an eviction, which a budget does not
// hold back either). The two timestamps are the API server's, compared
// with each other only, never with the soak's clock.
func (c *Checker) deletedJustBefore(b *pdb, except *pod, r *request, at time.Time) int {
	created := time.Time{}
	if r.obj != nil {
		created = r.obj.CreationTimestamp.Truncate(time.Second)
	}
	n := 0
	for _, p := range c.namespace(b.namespace).pods {
		if p == except || !terminating(p.obj) || !p.ready || !b.covers(p) || c.activeRequest(p) != nil || p.deletedSeen.After(at) {
			continue
		}
		justBefore := at.Sub(p.deletedSeen) <= c.slack.Skew
		after := !created.IsZero() && !p.deletionAsked.IsZero() && p.deletionAsked.After(created)
		if justBefore || after {
			n++
		}
	}
	return n
}

// describeCovered describes the pods b covers besides except, with the
// request in flight of each that has one.
func (c *Checker) describeCovered(b *pdb, except *pod) []string {
	var lines []string
	for _, p := range c.namespace(b.namespace).pods {
		if p == except || !b.covers(p) {
			continue
		}
		line := c.describePod(p)
		if terminating(p.obj) {
			line += ", terminating"
		}
		if r := c.activeRequest(p); r != nil {
			line += ", request " + r.name + " in flight"
		}
		lines = append(lines, line)
	}
	slices.Sort(lines)
	return lines
}
