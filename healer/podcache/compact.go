package podcache

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/rejuv-dev/rejuv/api/pods"
)

// compactPod is what the cache keeps of a pod: what pods.Trim keeps, the
// spec (all but its node), conditions (all but their times) and
// container names and images shared with the pods that hold the same,
// and the times in seconds (the API's resolution). A corev1.Pod is about
// 1.2 KB before anything it points to, its conditions 120 bytes each and
// its container statuses 208: most of what every cached pod cost, whatever
// its content.
type compactPod struct {
	meta     compactMeta
	spec     *corev1.PodSpec
	nodeName string
	status   compactStatus
}

type compactStatus struct {
	phase         corev1.PodPhase
	qosClass      corev1.PodQOSClass
	hostIP, podIP string
	// note is the status's message and reason, nil when both are empty
	// (as for most pods).
	note               *statusNote
	observedGeneration int64
	startTime          int64
	conditions         []compactCondition
	containers         []compactContainerStatus
	initContainers     []compactContainerStatus
}

// statusNote is a pod status's message and reason.
type statusNote struct {
	message, reason string
}

// compactCondition is a condition, shared but for its times.
type compactCondition struct {
	fixed                  *corev1.PodCondition
	probed, lastTransition int64
}

// compactContainerStatus is what Trim keeps of a container's status. A
// running container's state, most containers' state, is kept as its
// start in seconds; another state, and the last state when there is
// one, as it is.
type compactContainerStatus struct {
	*containerImage
	containerID  packedID
	restartCount int32
	ready        bool
	started      startedFlag
	// running says the state is running since runningSince; else state
	// is the state (nil for none).
	running      bool
	runningSince int64
	state        *corev1.ContainerState
	// lastState is nil for none.
	lastState *corev1.ContainerState
}

type containerImage struct {
	name, image string
}

// startedFlag is a container status's Started: unset, false or true.
type startedFlag uint8

const (
	startedUnset startedFlag = iota
	startedFalse
	startedTrue
)

// noTime stands for a time not set.
const noTime = int64(-1 << 63)

// GetObjectKind implements runtime.Object.
func (c *compactPod) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject implements runtime.Object. What a compactPod points to
// is never changed in place: the copy shares it.
func (c *compactPod) DeepCopyObject() runtime.Object {
	out := *c
	return &out
}

// compact trims the pod (pods.Trim) and keeps it compactly, its shared
// values shared through s.
func (s *sharedValues) compact(pod *corev1.Pod) *compactPod {
	pod = pods.Trim(pod)
	spec := pod.Spec
	nodeName := s.String(spec.NodeName)
	spec.NodeName = ""
	spec.ServiceAccountName = s.String(spec.ServiceAccountName)
	spec.PriorityClassName = s.String(spec.PriorityClassName)
	st := &pod.Status
	out := &compactPod{meta: s.keepMeta(&pod.ObjectMeta), spec: s.spec(&spec), nodeName: nodeName, status: compactStatus{
		phase: corev1.PodPhase(s.String(string(st.Phase))), qosClass: corev1.PodQOSClass(s.String(string(st.QOSClass))),
		hostIP: s.String(st.HostIP), podIP: st.PodIP,
		observedGeneration: st.ObservedGeneration, startTime: secondsOfPointer(st.StartTime),
		containers: s.containerStatuses(st.ContainerStatuses), initContainers: s.containerStatuses(st.InitContainerStatuses),
	}}
	if st.Message != "" || st.Reason != "" {
		out.status.note = &statusNote{message: s.String(st.Message), reason: s.String(st.Reason)}
	}
	if st.Conditions != nil {
		out.status.conditions = make([]compactCondition, len(st.Conditions))
		for i := range st.Conditions {
			c := st.Conditions[i]
			probed, transition := seconds(c.LastProbeTime), seconds(c.LastTransitionTime)
			c.LastProbeTime, c.LastTransitionTime = metav1.Time{}, metav1.Time{}
			out.status.conditions[i] = compactCondition{fixed: s.condition(&c), probed: probed, lastTransition: transition}
		}
	}
	return out
}

func (s *sharedValues) containerStatuses(ss []corev1.ContainerStatus) []compactContainerStatus {
	if ss == nil {
		return nil
	}
	out := make([]compactContainerStatus, len(ss))
	for i := range ss {
		cs := &ss[i]
		started := startedUnset
		if cs.Started != nil {
			started = startedFalse
			if *cs.Started {
				started = startedTrue
			}
		}
		out[i] = compactContainerStatus{
			containerImage: s.image(cs.Name, cs.Image), containerID: s.packID(cs.ContainerID), restartCount: cs.RestartCount,
			ready: cs.Ready, started: started,
		}
		switch state := cs.State; {
		case state.Running != nil && state.Waiting == nil && state.Terminated == nil:
			out[i].running, out[i].runningSince = true, seconds(state.Running.StartedAt)
		case state != corev1.ContainerState{}:
			out[i].state = &state
		}
		if last := cs.LastTerminationState; last != (corev1.ContainerState{}) {
			out[i].lastState = &last
		}
	}
	return out
}

// podInto writes the pod c keeps into pod. The pod shares what c points
// to (its maps, spec's slices, states): a reader that changes it copies
// it first (podcache's Get and List do unless asked not to).
func (c *compactPod) podInto(pod *corev1.Pod) {
	*pod = corev1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}, ObjectMeta: c.meta.objectMeta(), Spec: *c.spec}
	pod.Spec.NodeName = c.nodeName
	st := &c.status
	pod.Status = corev1.PodStatus{
		Phase: st.phase, QOSClass: st.qosClass, HostIP: st.hostIP, PodIP: st.podIP,
		ObservedGeneration: st.observedGeneration, StartTime: timePointer(st.startTime),
		ContainerStatuses: containerStatuses(st.containers), InitContainerStatuses: containerStatuses(st.initContainers),
	}
	if st.note != nil {
		pod.Status.Message, pod.Status.Reason = st.note.message, st.note.reason
	}
	if st.conditions != nil {
		pod.Status.Conditions = make([]corev1.PodCondition, len(st.conditions))
		for i, cc := range st.conditions {
			cond := *cc.fixed
			cond.LastProbeTime, cond.LastTransitionTime = timeOf(cc.probed), timeOf(cc.lastTransition)
			pod.Status.Conditions[i] = cond
		}
	}
}

var startedValues = [...]bool{startedFalse: false, startedTrue: true}

func containerStatuses(ss []compactContainerStatus) []corev1.ContainerStatus {
	if ss == nil {
		return nil
	}
	out := make([]corev1.ContainerStatus, len(ss))
	for i := range ss {
		cs := &ss[i]
		var started *bool
		if cs.started != startedUnset {
			started = &startedValues[cs.started]
		}
		out[i] = corev1.ContainerStatus{
			Name: cs.name, Image: cs.image, ContainerID: cs.containerID.String(), RestartCount: cs.restartCount,
			Ready: cs.ready, Started: started,
		}
		switch {
		case cs.running:
			out[i].State.Running = &corev1.ContainerStateRunning{StartedAt: timeOf(cs.runningSince)}
		case cs.state != nil:
			out[i].State = *cs.state
		}
		if cs.lastState != nil {
			out[i].LastTerminationState = *cs.lastState
		}
	}
	return out
}

// seconds is t in seconds since the epoch, noTime when t is not set.
func seconds(t metav1.Time) int64 {
	if t.IsZero() {
		return noTime
	}
	return t.Unix()
}

func secondsOfPointer(t *metav1.Time) int64 {
	if t == nil {
		return noTime
	}
	return seconds(*t)
}

// timeOf is the time seconds stands for, in the local zone as the API's
// decoders give it.
func timeOf(s int64) metav1.Time {
	if s == noTime {
		return metav1.Time{}
	}
	return metav1.NewTime(time.Unix(s, 0).Local())
}

func timePointer(s int64) *metav1.Time {
	if s == noTime {
		return nil
	}
	t := timeOf(s)
	return &t
}
