package invariant

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The name prefixes of Rejuv's pods: a manager replica's and a daemon's.
// Labels are not relied on: a fault's target names a pod or a node.
const (
	managerPrefix = "rejuv-healer-"
	daemonPrefix  = "rejuv-daemon-"
)

// A role is what one of Rejuv's pods is: the manager or a daemon.
type role struct {
	name string
	// killedBy are the faults that restart the container of the pod
	// they target; restartedBy those that may restart any of the role's.
	killedBy    []Fault
	restartedBy []Fault
	// rolledBy is the fault that replaces the role's pods.
	rolledBy Fault
}

var (
	// A manager replica exits when it cannot renew its lease: stopping or
	// slowing the API may restart either.
	manager = &role{name: "manager", killedBy: []Fault{KillLeader, KillStandby}, restartedBy: []Fault{RestartAPIServer, SlowAPI}, rolledBy: RolloutManager}
	daemon  = &role{name: "daemon", killedBy: []Fault{KillDaemon}, rolledBy: RolloutDaemon}
)

// roleOf is the role of the pod named name, nil for another pod.
func roleOf(name string) *role {
	switch {
	case strings.HasPrefix(name, managerPrefix):
		return manager
	case strings.HasPrefix(name, daemonPrefix):
		return daemon
	}
	return nil
}

// A component is one of Rejuv's pods.
type component struct {
	uid             types.UID
	namespace, name string
	role            *role
	node            string
	// restarts are each container's highest restartCount seen.
	restarts map[string]int32
	// deleting is when the pod was first seen being deleted: a pod goes
	// when its kubelet stops it, which may be long after a fault asked
	// (its node's kubelet silenced meanwhile).
	deleting time.Time
	gone     bool
}

// subject names the component in a violation.
func (comp *component) subject() string { return "pod " + comp.namespace + "/" + comp.name }

// names says whether a fault's target is comp: its name or
// namespace/name.
func (comp *component) names(target string) bool {
	return target == comp.name || target == comp.namespace+"/"+comp.name
}

// everyManagerOn says whether every manager replica still running is on
// node, and there is one.
func (c *Checker) everyManagerOn(node string) bool {
	on := false
	for _, comp := range c.components {
		if comp.role != manager || comp.gone || !comp.deleting.IsZero() {
			continue
		}
		if comp.node != node {
			return false
		}
		on = true
	}
	return on
}

// componentSeen applies a watch event of one of Rejuv's pods: a container
// restarted, the pod gone or new must each be explained by a fault.
func (c *Checker) componentSeen(o ComponentSeen) {
	obj := o.Pod
	if obj == nil {
		return
	}
	ro := roleOf(obj.Name)
	if ro == nil {
		return
	}
	comp := c.components[obj.UID]
	if comp == nil {
		if c.componentsFrom.IsZero() {
			c.componentsFrom = o.At
		}
		comp = &component{uid: obj.UID, namespace: obj.Namespace, name: obj.Name, role: ro, node: obj.Spec.NodeName, restarts: map[string]int32{}}
		c.components[comp.uid] = comp
		for _, s := range allStatuses(obj) {
			comp.restarts[s.Name] = s.RestartCount
		}
		if o.At.Sub(c.componentsFrom) > c.slack.Skew {
			c.judgeArrival(comp, obj, o.At)
		}
	}
	if obj.Spec.NodeName != "" {
		comp.node = obj.Spec.NodeName
	}
	if obj.DeletionTimestamp != nil && comp.deleting.IsZero() {
		comp.deleting = o.At
	}
	for _, s := range allStatuses(obj) {
		prev, seen := comp.restarts[s.Name]
		comp.restarts[s.Name] = max(prev, s.RestartCount)
		if seen && s.RestartCount > prev {
			c.judgeComponentRestart(comp, obj, s, prev, o.At)
		}
	}
	if o.Gone && !comp.gone {
		comp.gone = true
		c.judgeDeparture(comp, obj, o.At)
	}
}

// judgeComponentRestart explains a container's restart by a fault that
// restarts the role's containers, or one that loses the pod's node.
func (c *Checker) judgeComponentRestart(comp *component, obj *corev1.Pod, s corev1.ContainerStatus, prev int32, at time.Time) {
	killed := c.explaining(at, c.slack.Component, comp.role.killedBy, func(w *window) bool { return comp.names(w.target) })
	if killed != nil || c.explaining(at, c.slack.Component, comp.role.restartedBy, nil) != nil || c.nodeLost(comp, at) {
		return
	}
	line := fmt.Sprintf("container %s restartCount %d -> %d, containerID %s", s.Name, prev, s.RestartCount, shortID(s.ContainerID))
	if t := s.LastTerminationState.Terminated; t != nil {
		line += fmt.Sprintf(", last terminated: reason %s exitCode %d", orDash(t.Reason), t.ExitCode)
	}
	c.violate(Components, at, comp.subject(),
		fmt.Sprintf("%s container %s restarted with no fault to explain it", comp.role.name, s.Name),
		append([]string{c.describeComponent(comp, obj), line}, c.recentFaults(at)...)...)
}

// judgeDeparture explains a pod gone by a rollout of its role or the loss
// of its node, when its deletion was first seen if it was.
func (c *Checker) judgeDeparture(comp *component, obj *corev1.Pod, at time.Time) {
	asked, evidence := at, []string{c.describeComponent(comp, obj)}
	if !comp.deleting.IsZero() {
		asked = comp.deleting
		evidence = append(evidence, "deletion seen "+c.offset(comp.deleting))
	}
	if c.explaining(asked, c.slack.Component, []Fault{comp.role.rolledBy}, nil) != nil || c.nodeLost(comp, asked) || c.nodeLost(comp, at) {
		return
	}
	c.violate(Components, at, comp.subject(), comp.role.name+" pod gone with no fault to explain it",
		append(evidence, c.recentFaults(asked)...)...)
}

// judgeArrival explains a new pod by a rollout of its role or the loss of
// a node: a lost node's pods are replaced wherever the scheduler puts
// them, and its daemon comes back with it.
func (c *Checker) judgeArrival(comp *component, obj *corev1.Pod, at time.Time) {
	if c.explaining(at, c.slack.Component, []Fault{comp.role.rolledBy, LoseNode}, nil) != nil {
		return
	}
	c.violate(Components, at, comp.subject(), "new "+comp.role.name+" pod with no fault to explain it",
		append([]string{c.describeComponent(comp, obj)}, c.recentFaults(at)...)...)
}

// nodeLost says whether a fault losing comp's node explains what was seen
// of it at at.
func (c *Checker) nodeLost(comp *component, at time.Time) bool {
	return comp.node != "" && c.explaining(at, c.slack.Component, []Fault{LoseNode}, func(w *window) bool { return w.target == comp.node }) != nil
}

// describeComponent is comp as a line of evidence, with its containers'
// last termination.
func (c *Checker) describeComponent(comp *component, obj *corev1.Pod) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s pod %s/%s uid %s node %s", comp.role.name, comp.namespace, comp.name, comp.uid, orDash(comp.node))
	for _, s := range allStatuses(obj) {
		fmt.Fprintf(&b, "; %s restartCount %d", s.Name, s.RestartCount)
		if t := s.LastTerminationState.Terminated; t != nil {
			fmt.Fprintf(&b, " last terminated %s exitCode %d", orDash(t.Reason), t.ExitCode)
		}
	}
	return b.String()
}

// recentFaults describes the faults under way at at or ended at most
// Slack.Component before it: what the soak did around then.
func (c *Checker) recentFaults(at time.Time) []string {
	var lines []string
	for _, w := range c.windows {
		if w.start.After(at) {
			break
		}
		if !w.ended || at.Sub(w.end) <= c.slack.Component {
			lines = append(lines, c.describeWindow(w))
		}
	}
	if len(lines) == 0 {
		lines = append(lines, fmt.Sprintf("no fault under way or ended within %s", c.slack.Component))
	}
	return lines
}

// allStatuses are obj's init and regular containers' statuses.
func allStatuses(obj *corev1.Pod) []corev1.ContainerStatus {
	return slices.Concat(obj.Status.InitContainerStatuses, obj.Status.ContainerStatuses)
}
