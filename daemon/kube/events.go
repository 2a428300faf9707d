package kube

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// eventQueue is how many events may wait to be written; beyond, new ones
// are dropped (and logged), as client-go's recorder does, rather than hold
// up a recreation.
const eventQueue = 1000

// Recorder writes events.k8s.io/v1 events in the background.
type Recorder struct {
	client *Client
	// controller and instance are the events' reportingController and
	// reportingInstance.
	controller, instance string
	queue                chan *eventsv1.Event
	log                  logr.Logger
}

// NewRecorder returns a Recorder; Run writes what it records.
func NewRecorder(c *Client, controller, instance string, log logr.Logger) *Recorder {
	return &Recorder{client: c, controller: controller, instance: instance, queue: make(chan *eventsv1.Event, eventQueue), log: log}
}

// Run writes the recorded events until ctx ends.
func (r *Recorder) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-r.queue:
			if err := r.client.CreateEvent(ctx, e); err != nil && ctx.Err() == nil {
				r.log.Error(err, "record event", "regarding", e.Regarding.Kind+" "+e.Regarding.Namespace+"/"+e.Regarding.Name, "reason", e.Reason)
			}
		}
	}
}

// Eventf records an event on regarding, related to related (which may be
// nil, or a nil pointer: a pod that is gone is no related object), at this
// moment.
func (r *Recorder) Eventf(regarding, related runtime.Object, eventType, reason, action, note string, args ...any) {
	now := time.Now()
	if absent(regarding) {
		r.log.Error(nil, "record event: no object to record it on", "reason", reason)
		return
	}
	ref, err := reference(regarding)
	if err != nil {
		r.log.Error(err, "record event", "reason", reason)
		return
	}
	e := &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Namespace: ref.Namespace, Name: fmt.Sprintf("%s.%x", ref.Name, now.UnixNano())},
		EventTime:           metav1.NewMicroTime(now),
		ReportingController: r.controller,
		ReportingInstance:   r.instance,
		Action:              action,
		Reason:              reason,
		Regarding:           *ref,
		Note:                v1alpha1.Truncate(fmt.Sprintf(note, args...), v1alpha1.MaxNoteLength),
		Type:                eventType,
	}
	if !absent(related) {
		if e.Related, err = reference(related); err != nil {
			r.log.Error(err, "record event", "reason", reason)
			return
		}
	}
	select {
	case r.queue <- e:
	default:
		r.log.Info("too many events waiting; dropped one", "regarding", ref.Kind+" "+ref.Namespace+"/"+ref.Name, "reason", reason)
	}
}

// absent says whether o holds no object: nil, or a nil pointer of one of
// the daemon's types, which is not a nil interface and which meta.Accessor
// would dereference.
func absent(o runtime.Object) bool {
	switch t := o.(type) {
	case nil:
		return true
	case *corev1.Pod:
		return t == nil
	case *v1beta1.ContainerRecreateRequest:
		return t == nil
	}
	return false
}

// reference names one of the daemon's objects.
func reference(o runtime.Object) (*corev1.ObjectReference, error) {
	m, err := meta.Accessor(o)
	if err != nil {
		return nil, err
	}
	ref := &corev1.ObjectReference{Namespace: m.GetNamespace(), Name: m.GetName(), UID: m.GetUID(), ResourceVersion: m.GetResourceVersion()}
	switch o.(type) {
	case *corev1.Pod:
		ref.APIVersion, ref.Kind = "v1", "Pod"
	case *v1beta1.ContainerRecreateRequest:
		ref.APIVersion, ref.Kind = v1beta1.GroupVersion.String(), "ContainerRecreateRequest"
	default:
		return nil, fmt.Errorf("no event reference for %T", o)
	}
	return ref, nil
}
