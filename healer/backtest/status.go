package backtest

import (
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// runtimePrefix is what a pod's status puts before a container's ID: the
// rules see IDs as the kubelet writes them.
const runtimePrefix = "containerd://"

// unknownNode is the node of a recorded pod whose node history does not
// name.
const unknownNode = "unknown"

// podState is a recorded pod as the replay sees it as time goes on: which
// instance of each container runs, and the recreations the replay made
// of them, which change the status as the kubelet's would (a new ID, one
// more restart, the stopped instance as the last termination). The
// working set is the recorded one: after a recreation the replay has
// nothing else to go by.
type podState struct {
	rec        *Pod
	containers []containerState
	// version counts the changes of the status: the pod's resourceVersion,
	// by which the engine keeps its conversion of the pod.
	version int
	pod     corev1.Pod
	built   bool
	// dirty is set when the status must be built again.
	dirty bool
	// judged is set once a pass judged the pod; lastSample is the time of
	// its containers' newest sample so far.
	judged     bool
	lastSample time.Time
	// now is the time the state was moved to.
	now time.Time
}

// containerState is one container's place in its recorded instances.
type containerState struct {
	// running is the index of the instance running, -1 for none: before
	// the first, or between one's end and the next's start.
	running int
	// recreated counts the replay's recreations of the running instance,
	// recreations all of them; lastRecreated is the latest's time and
	// before the one's before it (the recorded instance's start for the
	// first).
	recreated, recreations int
	lastRecreated, before  time.Time
	// notReady is set while history says the container is not ready.
	notReady bool
}

func newPodState(rec *Pod) *podState {
	s := &podState{rec: rec, containers: make([]containerState, len(rec.Containers))}
	for i := range s.containers {
		s.containers[i].running = -1
	}
	return s
}

// alive reports whether the pod ran at t: between From and To, or,
// without a To, until its samples stopped GoneAfter before.
func (s *podState) alive(t time.Time) bool {
	switch {
	case t.Before(s.rec.From):
		return false
	case !s.rec.To.IsZero():
		return t.Before(s.rec.To)
	}
	return t.Sub(maxTime(s.lastSample, s.rec.From)) < GoneAfter
}

// sampled reports whether the pod may still have samples at t: it has
// not been seen gone before.
func (s *podState) sampled(t time.Time) bool {
	return !t.Before(s.rec.From) && (s.rec.To.IsZero() || t.Before(s.rec.To))
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// at moves the state to t (never back) and returns the pod as it was then.
func (s *podState) at(t time.Time) *corev1.Pod {
	s.now = t
	changed := !s.built || s.dirty
	for i := range s.containers {
		c := &s.containers[i]
		if r := runningAt(s.rec.Containers[i].Instances, c.running, t); r != c.running {
			c.running, c.recreated, changed = r, 0, true
		}
	}
	if changed {
		s.version++
		s.build()
	}
	return &s.pod
}

// runningAt is the index of the instance running at t, from the one at
// from on (instances come in order).
func runningAt(instances []Instance, from int, t time.Time) int {
	i := max(from, 0)
	for i+1 < len(instances) && !instances[i+1].Started.After(t) {
		i++
	}
	if i >= len(instances) || instances[i].Started.After(t) || (!instances[i].Ended.IsZero() && !instances[i].Ended.After(t)) {
		return -1
	}
	return i
}

// ready records whether container i was ready, as history says; the
// status is built again when it changed.
func (s *podState) ready(i int, ready bool) {
	if c := &s.containers[i]; c.notReady == ready {
		c.notReady = !ready
		s.dirty = true
	}
}

// recreate counts the replay's recreation of a container at t.
func (s *podState) recreate(container string, t time.Time) {
	for i := range s.containers {
		if s.rec.Containers[i].Name == container {
			c := &s.containers[i]
			c.before = c.lastRecreated
			if in := s.instance(i); c.recreated == 0 && in != nil {
				c.before = in.Started
			}
			c.recreated++
			c.recreations++
			c.lastRecreated = t
		}
	}
	s.version++
	s.build()
}

// instance is the recorded instance container i runs, nil for none.
func (s *podState) instance(i int) *Instance {
	if r := s.containers[i].running; r >= 0 {
		return &s.rec.Containers[i].Instances[r]
	}
	return nil
}

// build writes the pod's status from the state.
func (s *podState) build() {
	s.built, s.dirty = true, false
	s.pod = *s.rec.Pod
	s.pod.ResourceVersion = strconv.Itoa(s.version)
	if s.pod.Spec.NodeName == "" {
		// A pod runs on a node: history may not say which.
		s.pod.Spec.NodeName = unknownNode
	}
	st := corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &metav1.Time{Time: s.rec.From}}
	ready := len(s.containers) > 0
	for i := range s.containers {
		cs := s.containerStatus(i)
		ready = ready && cs.Ready
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
	}
	cond := corev1.ConditionFalse
	if ready {
		cond = corev1.ConditionTrue
	}
	st.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: cond}, {Type: corev1.ContainersReady, Status: cond}}
	s.pod.Status = st
}

// containerStatus is container i's status: its running instance (ready
// unless history says otherwise, started), or waiting for the next.
func (s *podState) containerStatus(i int) corev1.ContainerStatus {
	c := &s.containers[i]
	rc := &s.rec.Containers[i]
	cs := corev1.ContainerStatus{Name: rc.Name, RestartCount: int32(max(c.running, 0) + c.recreations)}
	inst := s.instance(i)
	if inst == nil {
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
		if n := lastEnded(rc.Instances, s.now); n != nil {
			cs.LastTerminationState.Terminated = terminated(n)
		}
		return cs
	}
	id, started := inst.ID, inst.Started
	if c.recreated > 0 {
		id, started = fmt.Sprintf("%s-recreated-%d", inst.ID, c.recreated), c.lastRecreated
		prev := inst.ID
		if c.recreated > 1 {
			prev = fmt.Sprintf("%s-recreated-%d", inst.ID, c.recreated-1)
		}
		cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{Reason: "Completed", ContainerID: runtimePrefix + prev,
			StartedAt: metav1.NewTime(c.before), FinishedAt: metav1.NewTime(c.lastRecreated)}
	} else if c.running > 0 {
		cs.LastTerminationState.Terminated = terminated(&rc.Instances[c.running-1])
	}
	cs.ContainerID = runtimePrefix + id
	cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(started)}
	cs.Ready, cs.Started = !c.notReady, new(true)
	return cs
}

// lastEnded is the latest instance that had ended at t, nil for none.
func lastEnded(instances []Instance, t time.Time) *Instance {
	for i := len(instances) - 1; i >= 0; i-- {
		if e := instances[i].Ended; !e.IsZero() && !e.After(t) {
			return &instances[i]
		}
	}
	return nil
}

// terminated is an ended instance as the kubelet reports it.
func terminated(in *Instance) *corev1.ContainerStateTerminated {
	return &corev1.ContainerStateTerminated{Reason: in.Reason, ExitCode: in.ExitCode, ContainerID: runtimePrefix + in.ID,
		StartedAt: metav1.NewTime(in.Started), FinishedAt: metav1.NewTime(in.Ended)}
}
