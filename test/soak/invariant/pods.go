package invariant

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
)

// A pod is what the checker keeps of one pod of the soak's namespaces,
// by UID: a pod deleted and made again under its name is another pod.
type pod struct {
	uid             types.UID
	namespace, name string
	// obj is the pod as last seen.
	obj    *corev1.Pod
	gone   bool
	goneAt time.Time
	// instances are each container's latest instance, by name.
	instances map[string]*instance
	// ready is whether the pod was Ready (condition Ready True) when last
	// seen; readyUntil is when it was last seen to stop being Ready, and
	// readySince when it was last seen to become Ready.
	ready      bool
	readyUntil time.Time
	readySince time.Time
	// lastReady is the last time the pod was seen Ready;
	// droppedOutOfService whether its gate was False when it was last
	// seen to stop being Ready.
	lastReady           time.Time
	droppedOutOfService bool
	// deletedSeen is when the pod was first seen being deleted.
	deletedSeen time.Time
	// deletionAsked is the second in which the API server took the
	// pod's deletion, as the pod first seen being deleted says it.
	deletionAsked time.Time
	held          *heldEpisode
	// restartedAt are when each container was seen restarted, in order.
	restartedAt map[string][]time.Time
	// credited are the restarts attributed to a request, by the ID of
	// the instance each started.
	credited map[string]credit
}

// credit is a restart, the request it was put down to, and how many
// restarts the request was credited with for it.
type credit struct {
	r     *request
	rs    *restart
	times int
}

// An instance is a container as last seen: its latest non-empty
// containerID and the highest restartCount seen; whether it was seen
// running, and whether seen failing to start (waiting, or terminated by a
// start error) and never running.
type instance struct {
	id          string
	restarts    int32
	ran         bool
	failedStart bool
	// replaced are the IDs of the instances before id.
	replaced []string
}

// see records what s tells of the instance's state.
func (in *instance) see(s *corev1.ContainerStatus) {
	switch st := s.State; {
	case st.Running != nil:
		in.ran = true
	case st.Terminated != nil && !startFailed(st.Terminated) && !st.Terminated.StartedAt.IsZero():
		in.ran = true
	case st.Waiting != nil || (st.Terminated != nil && startFailed(st.Terminated)):
		in.failedStart = true
	}
}

// neverRan says whether the instance was replaced without having run: it
// was seen failing to start and never running, or the next instance's
// last state says its start failed.
func (in *instance) neverRan(next *corev1.ContainerStatus) bool {
	if in.ran {
		return false
	}
	if t := next.LastTerminationState.Terminated; t != nil && (t.ContainerID == "" || t.ContainerID == in.id) && startFailed(t) {
		return true
	}
	return in.failedStart
}

// startTriedAgain says whether the last of n restarts into s replaced an
// instance that never ran: the kubelet starting again an instance it
// could not start. For one restart, the instance replaced is prev; for
// more, the one just before s was never seen, and the kubelet reports it
// as s's last state: waiting (no reason) for an instance it created and
// never started (its node lost between the create and the start, seed 42),
// terminated by a start error for one whose start failed.
func startTriedAgain(n int, prev *instance, s *corev1.ContainerStatus) bool {
	if n == 1 {
		return prev.neverRan(s)
	}
	last := s.LastTerminationState
	return last.Waiting != nil || (last.Terminated != nil && startFailed(last.Terminated))
}

// startFailed says whether a container ended because it could not start.
func startFailed(t *corev1.ContainerStateTerminated) bool {
	return t.Reason == "StartError" || t.Reason == "ContainerCannotRun"
}

// restartedWithin says whether container was seen restarted between from
// and to.
func (p *pod) restartedWithin(container string, from, to time.Time) bool {
	for _, at := range p.restartedAt[container] {
		if !at.Before(from) && !at.After(to) {
			return true
		}
	}
	return false
}

// key is the pod's namespace/name, the key of its requests.
func (p *pod) key() string { return p.namespace + "/" + p.name }

// subject names the pod in a violation.
func (p *pod) subject() string { return "pod " + p.key() }

// readyAround says whether the pod was Ready at at, or stopped being so
// at most skew before while out of service by its readiness gate: a pod
// another watch may still have seen Ready, made unready by the request
// the soak has not seen yet. A pod that stopped being Ready with its gate
// True went unready for another reason (its node's kubelet silent, its
// probe failing), which the manager may have seen first.
func (p *pod) readyAround(at time.Time, skew time.Duration) bool {
	return p.ready || (!p.readyUntil.IsZero() && at.Sub(p.readyUntil) <= skew && p.droppedOutOfService)
}

// podSeen applies a pod's watch event: its restarts first, then what its
// new state means for budgets and service.
func (c *Checker) podSeen(o PodSeen) {
	if o.Pod == nil {
		return
	}
	p := c.pods[o.Pod.UID]
	var restarts []*restart
	if p == nil {
		p = &pod{uid: o.Pod.UID, namespace: o.Pod.Namespace, name: o.Pod.Name, instances: map[string]*instance{}}
		c.pods[p.uid] = p
		c.podsByName[p.key()] = p
		c.namespace(p.namespace).pods[p.uid] = p
		p.observe(o.Pod, o.At)
	} else {
		restarts = p.observe(o.Pod, o.At)
	}
	if o.Gone && !p.gone {
		p.gone, p.goneAt = true, o.At
		delete(c.namespace(p.namespace).pods, p.uid)
	}
	for _, r := range restarts {
		c.restarted(r)
	}
	c.podChanged(p, o.At)
}

// podChanged judges what depends on a pod's state after it or one of its
// requests changed.
func (c *Checker) podChanged(p *pod, at time.Time) {
	for _, pol := range c.namespace(p.namespace).policies {
		c.judgeBudget(pol, p, at)
	}
	c.judgeHeld(p, at)
}

// observe records obj as p's latest state and returns the restarts since
// the state before: a container whose containerID changed from one
// non-empty value to another, or whose restartCount grew. A count that
// grew by more than one (an event missed) is that many restarts.
func (p *pod) observe(obj *corev1.Pod, at time.Time) []*restart {
	var out []*restart
	for _, statuses := range [][]corev1.ContainerStatus{obj.Status.InitContainerStatuses, obj.Status.ContainerStatuses} {
		for i := range statuses {
			s := &statuses[i]
			prev := p.instances[s.Name]
			if prev == nil {
				in := &instance{id: s.ContainerID, restarts: s.RestartCount}
				in.see(s)
				p.instances[s.Name] = in
				continue
			}
			n := int(max(s.RestartCount-prev.restarts, 0))
			back := slices.Contains(prev.replaced, s.ContainerID)
			if n == 0 && s.ContainerID != "" && prev.id != "" && s.ContainerID != prev.id && !back {
				n = 1
			}
			if n > 0 {
				if p.restartedAt == nil {
					p.restartedAt = map[string][]time.Time{}
				}
				p.restartedAt[s.Name] = append(p.restartedAt[s.Name], at)
				out = append(out, &restart{pod: p, container: s.Name, at: at, times: n,
					oldID: prev.id, newID: s.ContainerID, oldCount: prev.restarts, newCount: s.RestartCount,
					terminated: s.LastTerminationState.Terminated, failedStart: startTriedAgain(n, prev, s)})
				prev.ran, prev.failedStart = false, false
			}
			switch {
			case back:
				// An instance replaced before does not come back: the
				// kubelet's last report of a pod it stopped may name it
				// (seed 12). Not a restart, and not the latest instance.
			case s.ContainerID != "" && s.ContainerID != prev.id:
				if prev.id != "" {
					prev.replaced = append(prev.replaced, prev.id)
				}
				prev.id = s.ContainerID
			}
			prev.restarts = max(prev.restarts, s.RestartCount)
			prev.see(s)
		}
	}
	ready := podCondition(obj, corev1.PodReady) == corev1.ConditionTrue
	if p.ready && !ready {
		p.readyUntil = at
		p.droppedOutOfService = podCondition(obj, v1beta1.PodReadyCondition) == corev1.ConditionFalse
	}
	if !p.ready && ready {
		p.readySince = at
	}
	if ready {
		p.lastReady = at
	}
	p.ready = ready
	if terminating(obj) && p.deletedSeen.IsZero() {
		p.deletedSeen, p.deletionAsked = at, deletionAsked(obj)
	}
	p.obj = obj
	return out
}

// podCondition is the status of obj's condition of type t, "" when it has
// none.
func podCondition(obj *corev1.Pod, t corev1.PodConditionType) corev1.ConditionStatus {
	if c := pods.Condition(obj, t); c != nil {
		return c.Status
	}
	return ""
}

// terminating says whether obj is being deleted.
func terminating(obj *corev1.Pod) bool { return obj.DeletionTimestamp != nil }

// deletionAsked is the second in which the API server took obj's
// deletion: it sets deletionTimestamp to that moment plus the grace
// period, and keeps timestamps to the second. Zero when obj is not being
// deleted.
func deletionAsked(obj *corev1.Pod) time.Time {
	if obj.DeletionTimestamp == nil {
		return time.Time{}
	}
	t := obj.DeletionTimestamp.Time
	if g := obj.DeletionGracePeriodSeconds; g != nil {
		t = t.Add(-time.Duration(*g) * time.Second)
	}
	return t.Truncate(time.Second)
}

// describePod is p as a line of evidence: identity, node, readiness and
// in-service gate.
func (c *Checker) describePod(p *pod) string {
	line := fmt.Sprintf("pod %s uid %s node %s: Ready %s, %s %s", p.key(), p.uid, orDash(p.obj.Spec.NodeName),
		orDash(string(podCondition(p.obj, corev1.PodReady))), v1beta1.PodReadyCondition,
		orDash(string(podCondition(p.obj, v1beta1.PodReadyCondition))))
	if p.gone {
		line += ", gone " + c.offset(p.goneAt)
	}
	return line
}

// orDash is s, or "-" for nothing.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
