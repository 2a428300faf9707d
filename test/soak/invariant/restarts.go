package invariant

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// A restart is a container of a soak pod seen as a new instance.
type restart struct {
	pod       *pod
	container string
	at        time.Time
	// times is how many restarts it stands for: more than one when the
	// restartCount grew by more between two observations.
	times              int
	oldID, newID       string
	oldCount, newCount int32
	terminated         *corev1.ContainerStateTerminated
	// failedStart tells that the instance replaced last never ran: the
	// kubelet starting again a container whose start failed (or that it
	// created and never started).
	failedStart bool
}

// describeRestart is the restart as a line of evidence.
func (c *Checker) describeRestart(rs *restart) string {
	line := fmt.Sprintf("container %s of pod %s (uid %s) restarted, seen %s: containerID %s -> %s, restartCount %d -> %d",
		rs.container, rs.pod.key(), rs.pod.uid, c.offset(rs.at), shortID(rs.oldID), shortID(rs.newID), rs.oldCount, rs.newCount)
	if t := rs.terminated; t != nil {
		line += fmt.Sprintf(", last terminated: reason %s exitCode %d", orDash(t.Reason), t.ExitCode)
	}
	return line
}

// restartsOnLostNode are the faults that restart a node's containers
// without any request: the node's kubelet comes back and starts its pods'
// containers again.
var restartsOnLostNode = []Fault{LoseNode}

// restarted attributes a restart to the pod's request that caused it, or
// waits Slack.Attribution for that request to be seen: the pod's watch
// may run ahead of the requests'. A restart on a node being lost is put
// down to the fault, and so is one that follows a request's own there.
func (c *Checker) restarted(rs *restart) {
	c.tally.restarts += rs.times
	node := rs.pod.obj.Spec.NodeName
	lost := node != "" && c.explaining(rs.at, c.slack.Component, restartsOnLostNode, func(w *window) bool { return w.target == node }) != nil
	if r := c.attributable(rs); r != nil {
		if lost && rs.times == 1 && r.restarts[rs.container] > 0 {
			// The request has its restart; the node's loss ended the
			// instance that followed it (seed 12: the kubelet started
			// it as the node was lost, and reported both once back).
			return
		}
		c.attribute(r, rs)
		return
	}
	if lost {
		return
	}
	uid := rs.pod.uid
	c.unattributed[uid] = append(c.unattributed[uid], rs)
	c.after(rs.at.Add(c.slack.Attribution), func(time.Time, bool) {
		waiting := c.unattributed[uid]
		for i, w := range waiting {
			if w == rs {
				c.unattributed[uid] = append(waiting[:i:i], waiting[i+1:]...)
				c.restartedUnasked(rs)
				return
			}
		}
	})
}

// attributable is the request rs is put down to: the one whose status
// snapshot names rs's new instance, whenever it ended; else one for its
// pod that lists the container and is in flight, or was seen ended at most
// Slack.Attribution before (or while its node's kubelet was silenced). A
// pod's requests run one at a time, but one may be seen ended after the
// next began: a request not yet credited with a restart of the container
// goes first, then the earliest seen (a request ended while its node was
// silent, whose stop the kubelet reports late, before the next one).
func (c *Checker) attributable(rs *restart) *request {
	var best *request
	for _, r := range c.requestsOf(rs.pod) {
		if !r.lists(rs.container) {
			continue
		}
		if rs.newID != "" && r.reportedInstance(rs.container) == rs.newID {
			// Its status names this very instance: however late the
			// soak sees it.
			return r
		}
		if end, ok := r.ended(); ok && rs.at.Sub(end) > c.slack.Attribution && !c.seenLateOnNode(rs.pod.obj.Spec.NodeName, end, rs.at) {
			continue
		}
		if best == nil || (best.restarts[rs.container] > 0 && r.restarts[rs.container] == 0) {
			best = r
		}
	}
	return best
}

// silenceKubelet are the faults that keep a node's kubelet from starting
// a stopped container again, or from reporting it: its restarts are seen
// late, after the request that stopped it may have ended.
var silenceKubelet = []Fault{PauseKubelet, RestartKubelet, RestartContainerd, LoseNode}

// seenLateOnNode says whether a restart seen at seen, on node, may be
// late for a request that ended at end: a fault silencing node's kubelet
// was under way when it ended (or began at most Slack.Attribution after)
// and ended at most Slack.Attribution before seen.
func (c *Checker) seenLateOnNode(node string, end, seen time.Time) bool {
	for _, w := range c.windows {
		if w.start.After(seen) {
			break
		}
		if !slices.Contains(silenceKubelet, w.kind) || w.target != node {
			continue
		}
		if w.start.Sub(end) > c.slack.Attribution {
			continue
		}
		if until := w.until(seen); !until.Before(end) && seen.Sub(until) <= c.slack.Attribution {
			return true
		}
	}
	return false
}

// attributeWaiting gives r the waiting restarts of its pod's containers
// that it lists: r was seen after the restarts it caused.
func (c *Checker) attributeWaiting(r *request) {
	p := c.podOf(r)
	if p == nil {
		return
	}
	waiting := c.unattributed[p.uid]
	kept := waiting[:0]
	for _, rs := range waiting {
		if r.matches(rs.pod) && r.lists(rs.container) {
			c.attribute(r, rs)
			continue
		}
		kept = append(kept, rs)
	}
	if len(kept) == 0 {
		delete(c.unattributed, p.uid)
		return
	}
	c.unattributed[p.uid] = kept
}

// attribute credits r with rs; a second restart of one container for one
// request is a violation, unless the instance it replaced never ran (the
// kubelet trying again the start of the instance the request made, after
// the start failed: a kubelet restarted as it started it, say). Of a
// restart that stands for several, the last is such a start tried again
// when the instance before it never ran: the others were the request's
// (seed 42: its stop, then the next instance created as the node was lost,
// never started, both reported at once when the node came back).
func (c *Checker) attribute(r *request, rs *restart) {
	times := rs.times
	if rs.failedStart && (times > 1 || r.restarts[rs.container] > 0) {
		times--
	}
	if rs.newID != "" {
		if rs.pod.credited == nil {
			rs.pod.credited = map[string]credit{}
		}
		rs.pod.credited[rs.newID] = credit{r: r, rs: rs, times: times}
	}
	if rs.at.After(r.lastRestart) {
		r.lastRestart = rs.at
	}
	if times == 0 {
		return
	}
	r.restarts[rs.container] += times
	if r.policy != "" && r.hasRun {
		key := runKey{policy: r.policy, at: r.runAt}
		if c.recreatedInRun[key] == nil {
			c.recreatedInRun[key] = map[types.UID]*request{}
		}
		c.recreatedInRun[key][rs.pod.uid] = r
	}
	if r.restarts[rs.container] < 2 || r.reported[reportedTwice] {
		return
	}
	r.reported[reportedTwice] = true
	c.violate(OncePerDecision, rs.at, r.subject(),
		fmt.Sprintf("recreated twice by one request: container %s restarted %d times for it", rs.container, r.restarts[rs.container]),
		c.describeRequest(r), c.describeRestart(rs))
}

// claimReported moves to r the restarts into the instances its status
// snapshot names that were put down to another request whose snapshot
// does not name them: a restart seen before the request that reports it
// went to the earliest candidate (a request ended while its node was
// silent, say), and the request that reports the very instance wins.
func (c *Checker) claimReported(r *request) {
	p := c.podOf(r)
	if p == nil {
		return
	}
	for _, name := range r.containers {
		id := r.reportedInstance(name)
		cr, ok := p.credited[id]
		if id == "" || !ok || cr.r == r || cr.r.reportedInstance(name) == id {
			continue
		}
		cr.r.restarts[name] -= cr.times
		if key := (runKey{policy: cr.r.policy, at: cr.r.runAt}); cr.r.policy != "" && cr.r.hasRun && c.recreatedInRun[key][p.uid] == cr.r {
			delete(c.recreatedInRun[key], p.uid)
		}
		c.attribute(r, cr.rs)
	}
}

// latestRequests bounds the pod's requests a restart's evidence lists.
const latestRequests = 3

// restartedUnasked records a restart no request accounts for, with the
// pod's latest requests.
func (c *Checker) restartedUnasked(rs *restart) {
	evidence := []string{c.describeRestart(rs), c.describePod(rs.pod)}
	requests := c.requestsOf(rs.pod)
	for _, r := range requests[max(len(requests)-latestRequests, 0):] {
		evidence = append(evidence, c.describeRequest(r))
	}
	c.violate(OncePerDecision, rs.at, rs.pod.subject(),
		fmt.Sprintf("restarted with no request: container %s", rs.container), evidence...)
}
