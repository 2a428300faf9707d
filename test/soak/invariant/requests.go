package invariant

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// A request is what the checker keeps of one ContainerRecreateRequest.
type request struct {
	uid             types.UID
	namespace, name string
	// obj is the request as last seen.
	obj *v1beta1.ContainerRecreateRequest
	// podKey is namespace/spec.podName; podUID the pod-uid label, or the
	// UID of the pod of that name when the request was first seen
	// without one.
	podKey string
	podUID types.UID
	// policy is the UID of the controlling RecreatePolicy, "" for a
	// request made by hand.
	policy types.UID
	// trigger and run are the trigger label and the run annotation;
	// runAt is the run's scheduled time in Unix seconds, hasRun whether
	// the annotation parses.
	trigger    string
	run        string
	runAt      int64
	hasRun     bool
	containers []string

	firstSeen time.Time
	// seenEnded says the request was already ended when first seen
	// (before the soak watched, or across a watch outage): what it did
	// before then is unknown, so it is held to nothing it did.
	seenEnded  bool
	terminal   bool
	terminalAt time.Time
	gone       bool
	goneAt     time.Time
	// tookReady says its pod was Ready, or stopped being so within
	// Slack.Skew, when the request was first seen: the request took an
	// available pod. Not for a request that cannot take its pod out of
	// service while the pod's node is silent (onlyItsNodeTakesOut).
	tookReady bool
	// restarts are the restarts attributed to it, by container;
	// lastRestart when the latest of them was seen.
	restarts    map[string]int
	lastRestart time.Time
	// reported are the once-per-request violations already recorded.
	reported map[reported]bool
}

// reported names a violation recorded at most once per request.
type reported int

// What may be reported of a request once.
const (
	reportedTwice reported = iota
	reportedRunRepeat
	reportedOverdue
)

// active says the request is neither gone nor seen in an ending phase.
func (r *request) active() bool { return !r.gone && !r.terminal }

// ended says the request was seen ended or gone, and when first.
func (r *request) ended() (time.Time, bool) {
	switch {
	case r.terminal:
		return r.terminalAt, true
	case r.gone:
		return r.goneAt, true
	}
	return time.Time{}, false
}

// succeeded says the request was seen ended with result Succeeded.
func (r *request) succeeded() bool {
	return r.terminal && r.obj.Status.Result == v1beta1.ResultSucceeded
}

// lists says whether the request recreates container name.
func (r *request) lists(name string) bool { return slices.Contains(r.containers, name) }

// ruleTriggered says a rule of its policy asked for the request.
func (r *request) ruleTriggered() bool { return strings.HasPrefix(r.trigger, "rule.") }

// key is the request's namespace/name.
func (r *request) key() string { return r.namespace + "/" + r.name }

// subject names the request in a violation.
func (r *request) subject() string { return "request " + r.key() }

// matches says whether r is a request for p: by name, and by UID when r
// knows its pod's.
func (r *request) matches(p *pod) bool {
	return r.podKey == p.key() && (r.podUID == "" || r.podUID == p.uid)
}

// terminalPhase says whether a request in phase has ended.
func terminalPhase(phase v1beta1.ContainerRecreateRequestPhase) bool {
	switch phase {
	case v1beta1.PhaseCompleted, v1beta1.PhaseSucceeded, v1beta1.PhaseFailed:
		return true
	}
	return false
}

// requestID keys a request by UID, or by namespace/name when it has none.
func requestID(obj *v1beta1.ContainerRecreateRequest) string {
	if obj.UID != "" {
		return string(obj.UID)
	}
	return obj.Namespace + "/" + obj.Name
}

// requestSeen applies a request's watch event.
func (c *Checker) requestSeen(o RequestSeen) {
	obj := o.Request
	if obj == nil {
		return
	}
	r := c.requests[requestID(obj)]
	first := r == nil
	if first {
		r = c.newRequest(obj, o.At)
	}
	r.obj = obj
	endedNow := !r.terminal && terminalPhase(obj.Status.Phase)
	if endedNow {
		r.terminal, r.terminalAt = true, o.At
		if r.succeeded() {
			c.tally.succeeded++
		} else {
			c.tally.failed++
		}
	}
	goneNow := o.Gone && !r.gone
	if goneNow {
		r.gone, r.goneAt = true, o.At
	}
	if first {
		r.seenEnded = !r.active()
		c.requestFirstSeen(r, o.At)
	}
	if endedNow {
		c.claimReported(r)
	}
	if endedNow && !r.seenEnded {
		c.requestEnded(r, o.At)
	}
	if goneNow && !r.terminal && !r.seenEnded {
		c.requestGoneEarly(r, o.At)
	}
	if p := c.podOf(r); p != nil {
		c.podChanged(p, o.At)
	}
}

// newRequest registers a request seen for the first time.
func (c *Checker) newRequest(obj *v1beta1.ContainerRecreateRequest, at time.Time) *request {
	r := &request{
		uid: obj.UID, namespace: obj.Namespace, name: obj.Name,
		podKey:    obj.Namespace + "/" + obj.Spec.PodName,
		podUID:    types.UID(obj.Labels[v1beta1.PodUIDLabel]),
		trigger:   obj.Labels[v1beta1.TriggerLabel],
		run:       obj.Annotations[v1beta1.RunAnnotation],
		firstSeen: at,
		restarts:  map[string]int{},
		reported:  map[reported]bool{},
	}
	r.runAt, r.hasRun = runSecond(r.run)
	if ref := v1alpha1.ControllingPolicy(obj); ref != nil {
		r.policy = ref.UID
	}
	for _, ctr := range obj.Spec.Containers {
		r.containers = append(r.containers, ctr.Name)
	}
	if r.podUID == "" {
		if p := c.podsByName[r.podKey]; p != nil {
			r.podUID = p.uid
		}
	}
	c.requests[requestID(obj)] = r
	c.requestsByPod[r.podKey] = append(c.requestsByPod[r.podKey], r)
	c.tally.requests++
	return r
}

// requestFirstSeen judges a request when it first appears. One already
// ended then only takes the restarts waiting for it and counts among its
// policy's decisions for the pod.
func (c *Checker) requestFirstSeen(r *request, at time.Time) {
	c.attributeWaiting(r)
	c.judgeDecision(r, at)
	if r.seenEnded {
		return
	}
	p := c.podOf(r)
	r.tookReady = p != nil && p.readyAround(at, c.slack.Skew) && !c.onlyItsNodeTakesOut(r, p, at)
	c.judgeDisruption(r, p, at)
	c.watchDeadline(r, at)
}

// silenceNode are the faults that keep a node's kubelet silent past the
// node grace: the node controller then turns the Ready condition of each of
// its pods False (NodeNotReady), the kubelet being unable to.
var silenceNode = []Fault{PauseKubelet, LoseNode}

// onlyItsNodeTakesOut says whether r, first seen at at, cannot take p out
// of service itself, so that what the soak last saw of p's readiness says
// nothing of whether the policy took it while Ready: r keeps an unready
// grace and p has the KruisePodReady gate, so nothing is stopped until p's
// Ready condition turns False; and p's node's kubelet is silent past the
// node grace (paused, or the node lost), so only the node controller turns
// it False, for the node's loss, whatever the request. The manager may take
// such a pod uncounted once it reads it unready (from the API server, not
// only its cache), while the soak's own pod watch may not have delivered the
// node controller's change yet: it lags after an API server restart (seed
// 14's hour, +3490.5 s: a run's two requests for the two pods of a paused
// kubelet's node, which the node controller had just made unready, were
// first seen with both pods Ready as the soak had last seen them, 36 s
// before; its relist came at +3504.0 s).
func (c *Checker) onlyItsNodeTakesOut(r *request, p *pod, at time.Time) bool {
	if p.obj == nil || !pods.HasReadinessGate(p.obj) {
		return false
	}
	if s := r.obj.Spec.Strategy; s == nil || s.UnreadyGracePeriodSeconds == nil {
		return false
	}
	node := p.obj.Spec.NodeName
	return node != "" && c.explaining(at, 0, silenceNode, func(w *window) bool { return w.target == node }) != nil
}

// requestEnded judges a request when it is first seen ended.
func (c *Checker) requestEnded(r *request, at time.Time) {
	c.judgeRunRepeat(r, at)
	c.watchStatus(r, at)
}

// podOf is the pod of r, nil when it has not been seen.
func (c *Checker) podOf(r *request) *pod {
	if r.podUID != "" {
		return c.pods[r.podUID]
	}
	return c.podsByName[r.podKey]
}

// requestsOf are the requests for p, in the order first seen.
func (c *Checker) requestsOf(p *pod) []*request {
	var out []*request
	for _, r := range c.requestsByPod[p.key()] {
		if r.matches(p) {
			out = append(out, r)
		}
	}
	return out
}

// activeRequest is a request for p in flight, nil when none is.
func (c *Checker) activeRequest(p *pod) *request {
	for _, r := range c.requestsByPod[p.key()] {
		if r.matches(p) && r.active() {
			return r
		}
	}
	return nil
}

// describeRequest is r as a line of evidence: its pod, containers, phase
// and result, and when it was seen to begin and end.
func (c *Checker) describeRequest(r *request) string {
	line := fmt.Sprintf("request %s uid %s for pod %s (uid %s) containers %s: phase %s result %s, first seen %s",
		r.key(), r.uid, r.podKey, orDash(string(r.podUID)), strings.Join(r.containers, ","),
		orDash(string(r.obj.Status.Phase)), orDash(string(r.obj.Status.Result)), c.offset(r.firstSeen))
	if r.terminal {
		line += ", ended " + c.offset(r.terminalAt)
	}
	if r.gone {
		line += ", gone " + c.offset(r.goneAt)
	}
	if r.trigger != "" {
		line += ", trigger " + r.trigger
	}
	if r.run != "" {
		line += ", run " + r.run
	}
	return line
}

// runSecond is a run annotation (RFC 3339) as Unix seconds: runs compare
// equal to the second, as the API's times are.
func runSecond(run string) (int64, bool) {
	if run == "" {
		return 0, false
	}
	t, err := time.Parse(time.RFC3339, run)
	if err != nil {
		return 0, false
	}
	return t.Unix(), true
}

// since is when r last acted on its pod as far as the soak saw: its
// latest restart, or its first sighting when it caused none.
func (r *request) since() time.Time {
	if r.lastRestart.After(r.firstSeen) {
		return r.lastRestart
	}
	return r.firstSeen
}

// reportedInstance is the container ID r's status snapshot gives container
// name's new instance, "" when it gives none.
func (r *request) reportedInstance(name string) string {
	for _, s := range r.obj.Status.ContainerStatusSnapshot {
		if s.Name == name {
			return s.ContainerID
		}
	}
	return ""
}
