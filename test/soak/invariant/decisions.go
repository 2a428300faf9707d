package invariant

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// A decisionKey is a policy and one of its pods: the requests it made for
// that pod are its decisions about it.
type decisionKey struct {
	policy, pod types.UID
}

// defaultCooldown is limits.cooldown when a policy does not set it (the
// CRD's default, 30m0s).
const defaultCooldown = 30 * time.Minute

// creationResolution is the resolution of the creationTimestamp from
// which the manager counts a cooldown: its wait may look a second short
// to a finer clock.
const creationResolution = time.Second

// judgeDecision holds a policy's request, when first seen, to the
// policy's earlier requests for the same pod: none of the same run may
// have succeeded, and a rule's request must come a cooldown after the
// previous rule request for one of its containers.
func (c *Checker) judgeDecision(r *request, at time.Time) {
	if r.policy == "" || r.podUID == "" {
		return
	}
	key := decisionKey{policy: r.policy, pod: r.podUID}
	earlier := c.decisions[key]
	c.decisions[key] = append(earlier, r)
	for _, e := range earlier {
		if sameRun(e, r) && e.succeeded() {
			c.repeatedInRun(e, r, at)
			break
		}
	}
	// A request first seen ended was made at some unknown time before.
	if !r.ruleTriggered() || r.seenEnded {
		return
	}
	cooldown := c.cooldownOf(r.policy)
	for _, e := range earlier {
		shared := sharedContainer(e, r)
		if !e.ruleTriggered() || e.seenEnded || shared == "" {
			continue
		}
		// The manager counts the cooldown from the earlier request's
		// creation, which its first sighting follows as the later one's
		// does: the two watches may lag differently by Slack.Skew.
		gap := r.firstSeen.Sub(e.firstSeen)
		if gap >= cooldown-c.slack.Skew-creationResolution {
			continue
		}
		c.violate(OncePerDecision, at, r.subject(),
			fmt.Sprintf("asked again by a rule within the cooldown: container %s, %.1fs after request %s, limits.cooldown %s", shared, gap.Seconds(), e.name, cooldown),
			c.describeRequest(e), c.describeRequest(r))
		return
	}
}

// judgeRunRepeat holds the later requests of a run for a pod to a
// request of that run just seen ended: once it succeeded, no other was
// due.
func (c *Checker) judgeRunRepeat(e *request, at time.Time) {
	if e.policy == "" || e.podUID == "" || !e.hasRun || !e.succeeded() {
		return
	}
	after := false
	for _, r := range c.decisions[decisionKey{policy: e.policy, pod: e.podUID}] {
		if r == e {
			after = true
			continue
		}
		if after && sameRun(e, r) {
			c.repeatedInRun(e, r, at)
		}
	}
}

// repeatedInRun records r as a second request of a run for a pod where
// first succeeded.
func (c *Checker) repeatedInRun(first, r *request, at time.Time) {
	if r.reported[reportedRunRepeat] {
		return
	}
	r.reported[reportedRunRepeat] = true
	c.violate(OncePerDecision, at, r.subject(),
		fmt.Sprintf("a second request for pod %s in run %s, after request %s of the run succeeded", r.podKey, r.run, first.name),
		c.describeRequest(first), c.describeRequest(r))
}

// sameRun says whether two requests were made by the same run.
func sameRun(a, b *request) bool { return a.hasRun && b.hasRun && a.runAt == b.runAt }

// sharedContainer is a container both requests recreate, "" when none.
func sharedContainer(a, b *request) string {
	for _, name := range a.containers {
		if b.lists(name) {
			return name
		}
	}
	return ""
}

// cooldownOf is limits.cooldown of the policy, its default when the
// policy sets none or has not been seen.
func (c *Checker) cooldownOf(uid types.UID) time.Duration {
	if pol := c.policies[uid]; pol != nil && pol.obj.Spec.Limits.Cooldown != nil {
		return pol.obj.Spec.Limits.Cooldown.Duration
	}
	return defaultCooldown
}
