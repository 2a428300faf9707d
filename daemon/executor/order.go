package executor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/daemon/cri"
)

// The containers of a request are stopped one after another, as
// OpenKruise documents its request and as its daemon does: each
// container's preStop hook and stop come before the next one's, so that an
// app that drains its connections through a proxy sidecar listed after it
// still has the proxy while its hook runs. The kubelet starts each one
// again as soon as it is stopped. With orderedRecreate the next one also
// waits for the previous one's new instance to have started.

// stopOrder is the order in which the request's containers are stopped,
// as indexes into its list: the list's order, except that without
// orderedRecreate the native sidecars come after the other containers, in
// the reverse of their order in the pod's initContainers, as the kubelet
// stops a pod's containers when the pod terminates. orderedRecreate keeps
// the list's order whatever the containers are: its point is the order of
// the starts, which the user chose.
func stopOrder(crr *v1beta1.ContainerRecreateRequest, pod *corev1.Pod) []int {
	ordered := strategy(crr).OrderedRecreate
	order := make([]int, 0, len(crr.Spec.Containers))
	var sidecars []int
	// initIndex is each sidecar's place in the pod's initContainers.
	initIndex := map[int]int{}
	for i, c := range crr.Spec.Containers {
		if found := pods.FindContainer(pod, c.Name); !ordered && found.Kind == pods.ContainerSidecar {
			sidecars = append(sidecars, i)
			initIndex[i] = found.Index
			continue
		}
		order = append(order, i)
	}
	slices.SortFunc(sidecars, func(a, b int) int { return initIndex[b] - initIndex[a] })
	return append(order, sidecars...)
}

// advanceInOrder advances the unfinished containers in stopOrder and stops
// at most one of them at a time: a container lets the next one go once it
// is past its stop (stopped, exited by itself, or replaced by the
// kubelet), or with orderedRecreate once it has finished. A stop made
// within the pass lets the next container be stopped in the same pass; a
// stop that goes on in the background (under Run) holds the next ones
// until a later pass records it. It returns when to look again.
func (e *Executor) advanceInOrder(ctx context.Context, crr *v1beta1.ContainerRecreateRequest, pod *corev1.Pod, rt *cri.Client,
	st *v1beta1.ContainerRecreateRequestStatus, deadline time.Time) ([]time.Duration, error) {
	s := strategy(crr)
	order := stopOrder(crr, pod)
	var wake []time.Duration
	for k, i := range order {
		state := &st.ContainerRecreateStates[i]
		if finished(state) {
			continue
		}
		if failFast(st, s) {
			break
		}
		m, err := e.advance(ctx, crr, pod, rt, &crr.Spec.Containers[i], state)
		if err != nil {
			return wake, err
		}
		wake = append(wake, m.wake)
		if m.stop != "" {
			stopped, err := e.stopOne(ctx, crr, pod, rt, st, i, m.stop, deadline)
			if err != nil || !stopped {
				waitBehind(st, crr, order[k+1:], i)
				return wake, err
			}
			m.past = true
		}
		if !m.past || s.OrderedRecreate && !finished(state) {
			waitBehind(st, crr, order[k+1:], i)
			return wake, nil
		}
	}
	return wake, nil
}

// waitBehind says, in the state of each container of behind not yet
// begun, which container it waits for.
func waitBehind(st *v1beta1.ContainerRecreateRequestStatus, crr *v1beta1.ContainerRecreateRequest, behind []int, first int) {
	why := fmt.Sprintf("waiting for container %s to be stopped first: containers are stopped one after another", crr.Spec.Containers[first].Name)
	if strategy(crr).OrderedRecreate {
		why = fmt.Sprintf("waiting for container %s to be recreated and started first (orderedRecreate)", crr.Spec.Containers[first].Name)
	}
	for _, i := range behind {
		if s := &st.ContainerRecreateStates[i]; s.Phase == v1beta1.PhasePending {
			s.Message = why
		}
	}
}

// stopOne stops the instance id of the request's container i. The stop
// about to start is recorded first, and with it a preStop hook, so that a
// daemon that dies while it runs does not run it again; a hook recorded as started before this
// pass was cut short by a restart and is not run again. Under Run the stop
// goes on in the background (see stopInBackground) and the next pass
// records it; a single pass waits for it and records it at once. It says
// whether the container was stopped within this pass.
func (e *Executor) stopOne(ctx context.Context, crr *v1beta1.ContainerRecreateRequest, pod *corev1.Pod, rt *cri.Client,
	st *v1beta1.ContainerRecreateRequestStatus, i int, id string, deadline time.Time) (bool, error) {
	c, s := &crr.Spec.Containers[i], &st.ContainerRecreateStates[i]
	var resumed *metav1.Time
	if c.PreStop != nil && s.PreStopStartedAt != nil {
		resumed = s.PreStopStartedAt
	} else {
		if c.PreStop != nil {
			now := metav1.NewTime(e.Clock.Now())
			s.PreStopStartedAt = &now
		}
		// Recorded before anything is stopped, with the request's
		// resourceVersion: the manager, which ends a request it finds
		// not begun (Rejuv paused), either ends it first, and this write
		// fails, or finds it Recreating.
		s.Message = stoppingMessage
		if err := e.writeStatus(ctx, crr, func(w *v1beta1.ContainerRecreateRequestStatus) { *w = *st.DeepCopy() }); err != nil {
			return false, err
		}
	}
	if e.requeue != nil {
		e.stopInBackground(ctx, crr, pod, rt, st, i, id, resumed, deadline)
		return false, nil
	}
	stopped, err := e.stopInstance(ctx, crr, pod, rt, c, s, id, resumed, deadline)
	if stopped {
		// Recorded at once: a restarted daemon must not stop it again.
		if werr := e.writeStatus(ctx, crr, func(w *v1beta1.ContainerRecreateRequestStatus) { *w = *st.DeepCopy() }); werr != nil {
			return true, errors.Join(err, werr)
		}
	}
	return stopped, err
}

// stoppingMessage is a container's message while its stop runs.
const stoppingMessage = "stopping: its preStop hook, then SIGTERM and the rest of the grace period"

// stopInBackground stops the request's container i as stopOne does, in a
// goroutine of its own: the pass returns, and its worker serves other
// requests while the container takes its grace period. The container is
// marked stopping meanwhile (advance leaves it be, and the containers after
// it wait), and the request is looked at again once the stop has returned:
// the next pass records it from what stops remembers.
func (e *Executor) stopInBackground(ctx context.Context, crr *v1beta1.ContainerRecreateRequest, pod *corev1.Pod, rt *cri.Client,
	st *v1beta1.ContainerRecreateRequestStatus, i int, id string, resumed *metav1.Time, deadline time.Time) {
	name := crr.Spec.Containers[i].Name
	e.stopping.Store(stopKey(crr.UID, name), true)
	st.ContainerRecreateStates[i].Message = stoppingMessage
	own, ownStatus := crr.DeepCopy(), st.DeepCopy()
	key := types.NamespacedName{Namespace: crr.Namespace, Name: crr.Name}
	e.background.Go(func() {
		_, err := e.stopInstance(ctx, own, pod, rt, &own.Spec.Containers[i], &ownStatus.ContainerRecreateStates[i], id, resumed, deadline)
		e.stopping.Delete(stopKey(own.UID, name))
		// A request deleted while its stop ran was forgotten before the
		// stop was remembered: forget it again.
		if cur, ok := e.Store.Request(key.Namespace, key.Name); !ok || cur.UID != own.UID {
			e.forget(own.UID)
		}
		if err != nil && ctx.Err() == nil {
			logr.FromContextOrDiscard(ctx).Error(err, "stop failed; retrying", "container", name)
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
