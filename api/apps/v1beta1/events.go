package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// EventAction is the action of the events about a request's recreation.
const EventAction = "Recreate"

// EventRecorder records an event: the method of client-go's
// events.EventRecorder that the manager and the node's daemon use.
// +kubebuilder:object:generate=false
type EventRecorder interface {
	Eventf(regarding, related runtime.Object, eventType, reason, action, note string, args ...any)
}

// Event is an event about a request's recreation: its type (Normal or
// Warning), reason and note.
// +kubebuilder:object:generate=false
type Event struct {
	Type, Reason, Note string
}

// RecordOnBoth records ev on the request (related: the pod) and on the pod
// (related: the request), so that both describe commands show it. A pod
// that is gone (nil) gets none and is not named as related: a nil *Pod in
// the recorder's interface is not a nil interface, and client-go's
// recorder dereferences it to build the reference.
func RecordOnBoth(rec EventRecorder, crr *ContainerRecreateRequest, pod *corev1.Pod, ev Event) {
	if pod == nil {
		rec.Eventf(crr, nil, ev.Type, ev.Reason, EventAction, "%s", ev.Note)
		return
	}
	rec.Eventf(crr, pod, ev.Type, ev.Reason, EventAction, "%s", ev.Note)
	rec.Eventf(pod, crr, ev.Type, ev.Reason, EventAction, "%s (ContainerRecreateRequest %s)", ev.Note, crr.Name)
}
