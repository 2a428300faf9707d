package invariant

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// defaultMaxUnavailable is rollout.maxUnavailable when a policy does not
// set it (the CRD's default).
var defaultMaxUnavailable = intstr.FromString("25%")

// A budgetEpisode is a stretch of time during which a policy kept more
// pods unavailable than its maxUnavailable allows.
type budgetEpisode struct {
	start, end time.Time
	// peak is the most pods unavailable at once, allowed the most allowed
	// then, and evidence the pods and requests then.
	peak, allowed, selected int
	evidence                []string
	violation               *Violation
}

// judgeBudget classifies p for pol again and judges pol's budget.
func (c *Checker) judgeBudget(pol *policy, p *pod, at time.Time) {
	c.classify(pol, p)
	c.evaluateBudget(pol, at)
}

// classify says whether pol selects p (a pod being deleted is going
// whatever the policy does, and the manager leaves it out), and whether
// it keeps p
// unavailable: a request of pol took p while it was Ready and is in
// flight, or pol's latest request for p ended and p has not been seen
// Ready since the request's last restart of its containers (or since the
// request was first seen, when it restarted none): a pod that came back
// and then went unready for another reason (its node lost) is not the
// policy's doing. A pod that was not Ready when taken was not made
// unavailable by Rejuv (the manager may recreate such a pod beyond the
// budget).
func (c *Checker) classify(pol *policy, p *pod) {
	if p.gone || terminating(p.obj) || !pol.selector.Matches(labels.Set(p.obj.Labels)) {
		delete(pol.selected, p.uid)
		delete(pol.disrupted, p.uid)
		return
	}
	pol.selected[p.uid] = true
	var holder, latest *request
	for _, r := range c.requestsOf(p) {
		if r.policy != pol.uid {
			continue
		}
		latest = r
		if r.active() && r.tookReady && holder == nil {
			holder = r
		}
	}
	if holder == nil && latest != nil && !latest.active() && latest.tookReady && !p.ready && !p.lastReady.After(latest.since()) {
		holder = latest
	}
	if holder == nil {
		delete(pol.disrupted, p.uid)
		return
	}
	pol.disrupted[p.uid] = holder
}

// maxUnavailable is how many of selected pods pol may keep unavailable:
// spec.rollout.maxUnavailable, a percentage rounded down, at least one.
// A value that does not parse (admission refuses it) allows one.
func maxUnavailable(pol *policy, selected int) int {
	v := defaultMaxUnavailable
	if mu := pol.obj.Spec.Rollout.MaxUnavailable; mu != nil {
		v = *mu
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(&v, selected, false)
	if err != nil {
		return 1
	}
	return max(n, 1)
}

// evaluateBudget opens, follows or closes pol's episode over budget. An
// episode is a violation once it has lasted longer than Slack.Skew: the
// manager may have seen a pod Ready that the soak has not yet.
func (c *Checker) evaluateBudget(pol *policy, at time.Time) {
	unavailable := len(pol.disrupted)
	allowed := maxUnavailable(pol, len(pol.selected))
	e := pol.episode
	switch {
	case unavailable > allowed && e == nil:
		e = &budgetEpisode{start: at}
		pol.episode = e
		c.peak(pol, e, unavailable, allowed)
		c.after(at.Add(c.slack.Skew), func(now time.Time, _ bool) {
			if pol.episode == e && now.Sub(e.start) > c.slack.Skew {
				e.violation = c.violate(Budget, e.start, pol.subject(), "")
				c.describeBudget(e)
			}
		})
	case unavailable > allowed:
		if unavailable > e.peak {
			c.peak(pol, e, unavailable, allowed)
		}
	case e != nil:
		c.endBudgetEpisode(pol, at)
	}
}

// peak records the pods pol keeps unavailable as e's worst moment.
func (c *Checker) peak(pol *policy, e *budgetEpisode, unavailable, allowed int) {
	e.peak, e.allowed, e.selected = unavailable, allowed, len(pol.selected)
	uids := make([]types.UID, 0, len(pol.disrupted))
	for uid := range pol.disrupted {
		uids = append(uids, uid)
	}
	slices.Sort(uids)
	e.evidence = e.evidence[:0]
	for _, uid := range uids {
		e.evidence = append(e.evidence, c.describePod(c.pods[uid]), "  "+c.describeRequest(pol.disrupted[uid]))
	}
	if e.violation != nil {
		c.describeBudget(e)
	}
}

// endBudgetEpisode closes pol's episode over budget at at.
func (c *Checker) endBudgetEpisode(pol *policy, at time.Time) {
	e := pol.episode
	if e == nil {
		return
	}
	pol.episode, e.end = nil, at
	if e.violation != nil {
		c.describeBudget(e)
	}
}

// describeBudget writes e's violation from what is known of e so far.
func (c *Checker) describeBudget(e *budgetEpisode) {
	v := e.violation
	v.What = fmt.Sprintf("%d of %d selected pods unavailable because of the policy at the peak, spec.rollout.maxUnavailable allows %d",
		e.peak, e.selected, e.allowed)
	span := "over budget from " + c.offset(e.start) + ", not back within budget by the last observation"
	if !e.end.IsZero() {
		span = fmt.Sprintf("over budget from %s to %s (%.1fs)", c.offset(e.start), c.offset(e.end), e.end.Sub(e.start).Seconds())
	}
	v.Evidence = append([]string{span, "at the peak:"}, e.evidence...)
}
