package crr

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// finish tidies up a completed request once (while it still has the active
// label: events, metrics, the pod's readiness, then the label goes), and
// deletes it when its TTL runs out, or later while its run goes on
// (keptForRun).
func (r *Reconciler) finish(ctx context.Context, crr *v1beta1.ContainerRecreateRequest) (ctrl.Result, error) {
	if _, active := crr.Labels[v1beta1.ActiveLabel]; active {
		if err := r.retire(ctx, crr); err != nil {
			return ctrl.Result{}, err
		}
	}
	ttl := crr.Spec.TTLSecondsAfterFinished
	if ttl == nil || crr.Status.CompletionTime == nil {
		return ctrl.Result{}, nil
	}
	expiry := crr.Status.CompletionTime.Add(time.Duration(*ttl) * time.Second)
	if left := expiry.Sub(r.Clock.Now()); left > 0 {
		return ctrl.Result{RequeueAfter: left}, nil
	}
	switch kept, err := r.keptForRun(ctx, crr); {
	case err != nil:
		return ctrl.Result{}, err
	case kept:
		return ctrl.Result{RequeueAfter: runKeepRecheck}, nil
	}
	if err := r.Client.Delete(ctx, crr, client.Preconditions{UID: &crr.UID}); err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("delete ContainerRecreateRequest %s/%s after its TTL: %w", crr.Namespace, crr.Name, err)
	}
	ctrl.LoggerFrom(ctx).Info("deleted completed ContainerRecreateRequest after its TTL", "ttlSecondsAfterFinished", *ttl)
	return ctrl.Result{}, nil
}

// retire does what follows a completion exactly once.
func (r *Reconciler) retire(ctx context.Context, crr *v1beta1.ContainerRecreateRequest) error {
	pod := &corev1.Pod{}
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: crr.Namespace, Name: crr.Spec.PodName}, pod)
	switch {
	case apierrors.IsNotFound(err):
		pod = nil
	case err != nil:
		return fmt.Errorf("get pod %s/%s: %w", crr.Namespace, crr.Spec.PodName, err)
	case string(pod.UID) != crr.Labels[v1beta1.PodUIDLabel]:
		pod = nil
	}
	// The pod goes back in service through the readiness controller
	// (PodReadinessReconciler), which this completion wakes: it alone
	// decides whether another request still holds the pod.
	base := crr.DeepCopy()
	delete(crr.Labels, v1beta1.ActiveLabel)
	if err := r.Client.Patch(ctx, crr, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("remove active label of ContainerRecreateRequest %s/%s: %w", crr.Namespace, crr.Name, err)
	}
	// Announced once the label is gone, so a retry after a failed patch
	// does not announce twice.
	for _, s := range crr.Status.ContainerRecreateStates {
		eventType := corev1.EventTypeNormal
		if s.Phase != v1beta1.PhaseSucceeded {
			eventType = corev1.EventTypeWarning
		}
		note := fmt.Sprintf("container %s: %s", s.Name, s.Phase)
		if s.Message != "" {
			note += ": " + s.Message
		}
		r.eventOnBoth(crr, pod, eventType, reasonContainer, note)
	}
	result := crr.Status.Result
	if result == "" {
		result = v1beta1.ResultOf(crr.Status.ContainerRecreateStates)
	}
	eventType := corev1.EventTypeNormal
	if result != v1beta1.ResultSucceeded {
		eventType = corev1.EventTypeWarning
	}
	note := fmt.Sprintf("completed: %s", result)
	if crr.Status.Message != "" {
		note += ": " + crr.Status.Message
	}
	r.eventOnBoth(crr, pod, eventType, reasonCompleted, note)
	source := v1beta1.SourceOf(crr)
	crrCompleted.WithLabelValues(crr.Namespace, source, string(result)).Inc()
	if crr.Status.CompletionTime != nil {
		crrDuration.WithLabelValues(source, string(result)).Observe(crr.Status.CompletionTime.Sub(crr.CreationTimestamp.Time).Seconds())
	}
	r.mu.Lock()
	delete(r.announced, crr.UID)
	delete(r.counted, crr.UID)
	r.mu.Unlock()
	return nil
}
