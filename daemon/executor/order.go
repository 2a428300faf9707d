package executor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/daemon/cri"
)

// nextBatch says which containers this pass advances: every unfinished
// one, or with orderedRecreate only the first of them.
func nextBatch(st *v1beta1.ContainerRecreateRequestStatus, ordered bool) []int {
	var batch []int
	for i := range st.ContainerRecreateStates {
		if finished(&st.ContainerRecreateStates[i]) {
			continue
		}
		batch = append(batch, i)
		if ordered {
			break
		}
	}
	return batch
}

// advanceAll advances the containers of batch together, as the kubelet
// stops a pod's containers: their preStop hooks and stops run at the same
// time, so none of them comes back before the others were stopped. The
// hooks about to start are recorded first, in one write, so that a daemon
// that dies while one runs does not run it again. Under Run the stops go on
// in the background (see stopInBackground) and the next pass records them;
// a single pass waits for them and records them at once, in one write. It
// returns when to look again.
func (e *Executor) advanceAll(ctx context.Context, crr *v1beta1.ContainerRecreateRequest, pod *corev1.Pod, rt *cri.Client,
	st *v1beta1.ContainerRecreateRequestStatus, batch []int, deadline time.Time) ([]time.Duration, error) {
	wake := make([]time.Duration, len(batch))
	targets := make([]string, len(batch))
	errs := make([]error, len(batch))
	var wg sync.WaitGroup
	for k, i := range batch {
		wg.Go(func() {
			wake[k], targets[k], errs[k] = e.advance(ctx, crr, pod, rt, &crr.Spec.Containers[i], &st.ContainerRecreateStates[i])
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil || !slices.ContainsFunc(targets, func(id string) bool { return id != "" }) {
		return wake, err
	}

	// A hook recorded as started before this pass was cut short by a
	// restart: it is not run again. The others are recorded now.
	resumed := make([]*metav1.Time, len(batch))
	record := false
	for k, i := range batch {
		s := &st.ContainerRecreateStates[i]
		switch {
		case targets[k] == "" || crr.Spec.Containers[i].PreStop == nil:
		case s.PreStopStartedAt != nil:
			resumed[k] = s.PreStopStartedAt
		default:
			now := metav1.NewTime(e.Clock.Now())
			s.PreStopStartedAt, record = &now, true
		}
	}
	if record {
		if err := e.writeStatus(ctx, crr, func(s *v1beta1.ContainerRecreateRequestStatus) { *s = *st.DeepCopy() }); err != nil {
			return wake, err
		}
	}

	if e.requeue != nil {
		e.stopInBackground(ctx, crr, pod, rt, st, batch, targets, resumed, deadline)
		return wake, nil
	}
	stopped, errs := e.stopAll(ctx, crr, pod, rt, st, batch, targets, resumed, deadline)
	if slices.Contains(stopped, true) {
		// Recorded at once, even when another container's stop failed: a
		// restarted daemon must not stop them again.
		if err := e.writeStatus(ctx, crr, func(s *v1beta1.ContainerRecreateRequestStatus) { *s = *st.DeepCopy() }); err != nil {
			errs = append(errs, err)
		}
	}
	return wake, errors.Join(errs...)
}

// stopAll stops the instances targets of the containers of batch
// together, and records each outcome in its state in st.
func (e *Executor) stopAll(ctx context.Context, crr *v1beta1.ContainerRecreateRequest, pod *corev1.Pod, rt *cri.Client,
	st *v1beta1.ContainerRecreateRequestStatus, batch []int, targets []string, resumed []*metav1.Time, deadline time.Time) ([]bool, []error) {
	stopped := make([]bool, len(batch))
	errs := make([]error, len(batch))
	var wg sync.WaitGroup
	for k, i := range batch {
		if targets[k] == "" {
			continue
		}
		wg.Go(func() {
			stopped[k], errs[k] = e.stopInstance(ctx, crr, pod, rt, &crr.Spec.Containers[i], &st.ContainerRecreateStates[i], targets[k], resumed[k], deadline)
		})
	}
	wg.Wait()
	return stopped, errs
}

// stoppingMessage is a container's message while its stop runs.
const stoppingMessage = "stopping: its preStop hook, then SIGTERM and the rest of the grace period"

// stopInBackground stops the instances targets as stopAll does, in a
// goroutine of its own: the pass returns, and its worker serves other
// requests while a container takes its grace period. The containers are
// marked stopping meanwhile (advance leaves them be), and the request is
// looked at again once the stops have returned: the next pass records
// them from what stops remembers.
func (e *Executor) stopInBackground(ctx context.Context, crr *v1beta1.ContainerRecreateRequest, pod *corev1.Pod, rt *cri.Client,
	st *v1beta1.ContainerRecreateRequestStatus, batch []int, targets []string, resumed []*metav1.Time, deadline time.Time) {
	for k, i := range batch {
		if targets[k] != "" {
			e.stopping.Store(stopKey(crr.UID, crr.Spec.Containers[i].Name), true)
			st.ContainerRecreateStates[i].Message = stoppingMessage
		}
	}
	own, ownStatus := crr.DeepCopy(), st.DeepCopy()
	key := types.NamespacedName{Namespace: crr.Namespace, Name: crr.Name}
	e.background.Go(func() {
		_, errs := e.stopAll(ctx, own, pod, rt, ownStatus, batch, targets, resumed, deadline)
		for k, i := range batch {
			if targets[k] != "" {
				e.stopping.Delete(stopKey(own.UID, own.Spec.Containers[i].Name))
			}
		}
		// A request deleted while its stop ran was forgotten before the
		// stop was remembered: forget it again.
		if cur, ok := e.Store.Request(key.Namespace, key.Name); !ok || cur.UID != own.UID {
			e.forget(own.UID)
		}
		err := errors.Join(errs...)
		if err != nil && ctx.Err() == nil {
			logr.FromContextOrDiscard(ctx).Error(err, "stop failed; retrying")
		}
		e.requeue(key, err != nil)
	})
}

// stopInstance stops the container's instance id (see stop) and records
// the outcome in its state; it says whether it stopped it.
func (e *Executor) stopInstance(ctx context.Context, crr *v1beta1.ContainerRecreateRequest, pod *corev1.Pod, rt *cri.Client,
	c *v1beta1.ContainerRecreateRequestContainer, state *v1beta1.ContainerRecreateRequestContainerRecreateState, id string, hookStarted *metav1.Time, deadline time.Time) (bool, error) {
	ok, err := e.stop(ctx, crr, pod, rt, c, id, hookStarted, deadline)
	switch {
	case errors.Is(err, errPodDeleting):
		state.Message = deletingMessage
		return false, nil
	case err != nil || !ok:
		state.Message = exitedMessage
		return false, err
	}
	state.IsKilled = true
	state.Message = "stopped; waiting for the kubelet to start a new container"
	return true, nil
}

// failUnrecreatable fails, before anything is stopped, the containers the
// request cannot recreate: those it has no statusContext for (only a
// request the webhook never saw lacks it), and those the kubelet would not
// start again once stopped (checked by the webhook at creation, and again
// here against the pod itself, whatever another webhook changed after
// Rejuv's). With failurePolicy Fail, such a request stops nothing.
func failUnrecreatable(crr *v1beta1.ContainerRecreateRequest, pod *corev1.Pod, st *v1beta1.ContainerRecreateRequestStatus) {
	for i, c := range crr.Spec.Containers {
		s := &st.ContainerRecreateStates[i]
		switch {
		case finished(s):
		case c.StatusContext == nil:
			s.Phase, s.Message = v1beta1.PhaseFailed, "the request has no statusContext for this container; create requests through Rejuv's webhook"
		case !pods.Restartable(pod, c.Name):
			s.Phase, s.Message = v1beta1.PhaseFailed, "not stopped: "+pods.Unrestartable(pod, c.Name)
		}
	}
}

// failFast fails the unfinished containers once one has failed, unless
// failurePolicy is Ignore; it says whether it did.
func failFast(st *v1beta1.ContainerRecreateRequestStatus, s v1beta1.ContainerRecreateRequestStrategy) bool {
	if s.FailurePolicy == v1beta1.FailurePolicyIgnore {
		return false
	}
	for _, cs := range st.ContainerRecreateStates {
		if cs.Phase == v1beta1.PhaseFailed {
			failRest(st, fmt.Sprintf("not recreated: container %s failed and failurePolicy is Fail", cs.Name))
			return true
		}
	}
	return false
}
