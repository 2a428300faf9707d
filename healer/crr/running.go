package crr

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
)

// Event reasons.
const (
	reasonStarted     = "RecreateStarted"
	reasonNotPickedUp = "NotPickedUp"
	reasonContainer   = "ContainerRecreate"
	reasonCompleted   = "RecreateCompleted"
	reasonPodUnready  = "PodMadeUnready"
	// reasonNoReadinessGate: the request asks for an unready grace that
	// its pod, without the readiness gate, cannot be given.
	reasonNoReadinessGate = "NoReadinessGate"
)

// holdUnready takes the pod out of service before anything is stopped: when
// the request asks for an unready grace and the pod has the KruisePodReady
// gate, the gate's condition is set False and status's PreRecreateGrace
// condition records since when. The daemon waits for that condition.
// A pod found back in service while its request holds it (put back by a
// writer that missed the request) is taken out again, so the daemon's wait
// for the kubelet to report it not ready ends.
func (r *Reconciler) holdUnready(ctx context.Context, crr *v1beta1.ContainerRecreateRequest, pod *corev1.Pod, status *v1beta1.ContainerRecreateRequestStatus) error {
	s := crr.Spec.Strategy
	if s == nil || s.UnreadyGracePeriodSeconds == nil {
		return nil
	}
	if !pods.HasReadinessGate(pod) {
		r.noGate(crr, pod, status)
		return nil
	}
	msg := fmt.Sprintf("containers are being recreated by ContainerRecreateRequest %s", crr.Name)
	if meta.IsStatusConditionTrue(crr.Status.Conditions, v1beta1.ConditionPreRecreateGrace) {
		return r.holdAgain(ctx, crr, pod, msg)
	}
	if err := setPodReady(ctx, r.Client, pod, corev1.ConditionFalse, reasonRecreating, msg); err != nil {
		return err
	}
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type:               v1beta1.ConditionPreRecreateGrace,
		Status:             metav1.ConditionTrue,
		Reason:             reasonPodUnready,
		Message:            fmt.Sprintf("pod %s is not ready (%s=False); containers are stopped after %ds", pod.Name, PodReadyCondition, *s.UnreadyGracePeriodSeconds),
		ObservedGeneration: crr.Generation,
		LastTransitionTime: metav1.NewTime(r.Clock.Now()),
	})
	return nil
}

// holdAgain takes the pod out of service again when its request has taken
// it out (PreRecreateGrace) and the pod is back in service. The cache may
// not show the request's own write yet, so the pod is read again from the
// API server before anything is written.
func (r *Reconciler) holdAgain(ctx context.Context, crr *v1beta1.ContainerRecreateRequest, pod *corev1.Pod, msg string) error {
	if heldOut(pod) {
		return nil
	}
	live := &corev1.Pod{}
	switch err := r.Reader.Get(ctx, client.ObjectKeyFromObject(pod), live); {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("read pod %s/%s found back in service while its request holds it: %w", pod.Namespace, pod.Name, err)
	}
	if live.UID != pod.UID || heldOut(live) {
		return nil
	}
	ctrl.LoggerFrom(ctx).Info("taking the pod out of service again: it was put back while its request holds it", "ContainerRecreateRequest", crr.Name)
	return setPodReady(ctx, r.Client, live, corev1.ConditionFalse, reasonRecreating, msg)
}

// noGate says, once per request, that its unready grace cannot be kept:
// the pod has no readiness gate, so it stays in its Services until its
// containers stop. The PreRecreateGrace condition (False) and a warning
// on the request and the pod tell why its clients may have seen failures.
func (r *Reconciler) noGate(crr *v1beta1.ContainerRecreateRequest, pod *corev1.Pod, status *v1beta1.ContainerRecreateRequestStatus) {
	if *crr.Spec.Strategy.UnreadyGracePeriodSeconds == 0 || meta.FindStatusCondition(crr.Status.Conditions, v1beta1.ConditionPreRecreateGrace) != nil {
		return
	}
	msg := fmt.Sprintf("pod %s has no readiness gate %s, so it stays in its Services until its containers stop: the unready grace of %ds is not kept and clients may see requests fail (docs/policy.md: restarts no client notices)",
		pod.Name, PodReadyCondition, *crr.Spec.Strategy.UnreadyGracePeriodSeconds)
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type:               v1beta1.ConditionPreRecreateGrace,
		Status:             metav1.ConditionFalse,
		Reason:             reasonNoReadinessGate,
		Message:            msg,
		ObservedGeneration: crr.Generation,
		LastTransitionTime: metav1.NewTime(r.Clock.Now()),
	})
	r.eventOnBoth(crr, pod, corev1.EventTypeWarning, reasonNoReadinessGate, msg)
}

// announceStart records, once per request, that the daemon has started it.
func (r *Reconciler) announceStart(crr *v1beta1.ContainerRecreateRequest, pod *corev1.Pod) {
	if crr.Status.Phase != v1beta1.PhaseRecreating {
		return
	}
	r.mu.Lock()
	done := r.announced[crr.UID]
	r.announced[crr.UID] = true
	r.mu.Unlock()
	if done {
		return
	}
	note := fmt.Sprintf("recreating containers %s of pod %s (%s)", crr.Annotations[v1beta1.ContainersAnnotation], pod.Name, v1beta1.SourceOf(crr))
	r.eventOnBoth(crr, pod, corev1.EventTypeNormal, reasonStarted, note)
}

// checkPickup says in status when no daemon has touched the request in
// time (the daemon sets a phase, Pending when queued, Recreating when
// running, as soon as a worker takes the request, so an empty phase means
// no daemon has), or how long until it would. A node whose daemon pod is
// Ready has a daemon busy with its other requests, and is not reported
// without one.
func (r *Reconciler) checkPickup(ctx context.Context, crr *v1beta1.ContainerRecreateRequest, status *v1beta1.ContainerRecreateRequestStatus, now time.Time) time.Duration {
	if crr.Status.Phase != "" {
		return 0
	}
	waited := now.Sub(crr.CreationTimestamp.Time)
	if waited < r.PickupTimeout {
		return r.PickupTimeout - waited
	}
	node := crr.Labels[v1beta1.NodeNameLabel]
	if daemon := r.readyDaemon(ctx, node); daemon != "" {
		status.Message = fmt.Sprintf("the daemon on node %s (pod %s) runs but has not picked up this request within %s: it is busy with the node's other requests", node, daemon, r.PickupTimeout)
		return 0
	}
	status.Message = fmt.Sprintf("no daemon has picked up this request within %s; is rejuv-daemon running on node %s?", r.PickupTimeout, node)
	return 0
}

// daemonLabels select the daemon's pods.
var daemonLabels = client.MatchingLabels{"app.kubernetes.io/name": "rejuv-daemon"}

// readyDaemon is the name of the node's Ready daemon pod, from the cache;
// empty when there is none (or the cache cannot say).
func (r *Reconciler) readyDaemon(ctx context.Context, node string) string {
	if r.DaemonNamespace == "" || node == "" {
		return ""
	}
	var daemons corev1.PodList
	if err := r.Client.List(ctx, &daemons, client.InNamespace(r.DaemonNamespace), daemonLabels); err != nil {
		return ""
	}
	for i := range daemons.Items {
		if d := &daemons.Items[i]; d.Spec.NodeName == node && pods.Ready(d) {
			return d.Name
		}
	}
	return ""
}

// writeWatch writes what this pass found, in one write, and then tells of
// a newly missing daemon.
func (r *Reconciler) writeWatch(ctx context.Context, crr *v1beta1.ContainerRecreateRequest, status *v1beta1.ContainerRecreateRequestStatus) error {
	if equality.Semantic.DeepEqual(*status, crr.Status) {
		return nil
	}
	updated := crr.DeepCopy()
	updated.Status = *status
	if err := r.Client.Status().Update(ctx, updated); err != nil {
		return fmt.Errorf("update status of ContainerRecreateRequest %s/%s: %w", crr.Namespace, crr.Name, err)
	}
	if status.Message != crr.Status.Message && crr.Status.Phase == "" {
		r.Recorder.Eventf(crr, nil, corev1.EventTypeWarning, reasonNotPickedUp, "Wait", status.Message)
	}
	return nil
}

// countCreated counts a request once, when the manager first sees it
// active, and only if it was created while the manager ran.
func (r *Reconciler) countCreated(crr *v1beta1.ContainerRecreateRequest) {
	if _, active := crr.Labels[v1beta1.ActiveLabel]; !active {
		return
	}
	if crr.CreationTimestamp.Time.Before(r.startedAt.Add(-time.Second)) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.counted[crr.UID] {
		return
	}
	r.counted[crr.UID] = true
	source := v1beta1.SourceOf(crr)
	crrCreated.WithLabelValues(crr.Namespace, source).Inc()
	initCompleted(crr.Namespace, source)
}

// eventOnBoth records an event on the request and on its pod (see
// v1beta1.RecordOnBoth).
func (r *Reconciler) eventOnBoth(crr *v1beta1.ContainerRecreateRequest, pod *corev1.Pod, eventType, reason, note string) {
	v1beta1.RecordOnBoth(r.Recorder, crr, pod, v1beta1.Event{Type: eventType, Reason: reason, Note: note})
}
