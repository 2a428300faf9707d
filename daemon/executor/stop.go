package executor

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/go-logr/logr"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// stoppingMessage is a container's message while its stop runs.
const stoppingMessage = "stopping: its preStop hook, then SIGTERM and the rest of the grace period"

// stopInBackground stops the request's container i as stopOne does, in a
// goroutine of its own: the pass returns, and its worker serves other
// requests while the container takes its grace period. The container is
// marked stopping meanwhile (advance leaves it be, and the containers after
// it wait), and the request is looked at again once the stop has returned:
// the next pass records it from what stops remembers.
func (p *pass) stopInBackground(ctx context.Context, i int, id string, resumed *metav1.Time) {
	e, name := p.e, p.crr.Spec.Containers[i].Name
	e.stopping.Store(stopKey(p.crr.UID, name), true)
	p.st.ContainerRecreateStates[i].Message = stoppingMessage
	own := *p
	own.crr, own.st = p.crr.DeepCopy(), p.st.DeepCopy()
	key := types.NamespacedName{Namespace: own.crr.Namespace, Name: own.crr.Name}
	pod := podKey{Namespace: own.crr.Namespace, UID: own.pod.UID}
	e.background.Go(func() {
		_, err := own.stopInstance(ctx, i, id, resumed)
		e.stopping.Delete(stopKey(own.crr.UID, name))
		// A request deleted while its stop ran was forgotten before the
		// stop was remembered: forget it again.
		if cur, ok := e.Store.Request(key.Namespace, key.Name); !ok || cur.UID != own.crr.UID {
			e.forget(own.crr.UID)
		}
		if err != nil && ctx.Err() == nil {
			logr.FromContextOrDiscard(ctx).Error(err, "stop failed; retrying", "container", name)
		}
		e.requeue(pod, err != nil)
	})
}

// stopInstance stops the container's instance id (see stop) and records
// the outcome in its state; it says whether it stopped it.
func (p *pass) stopInstance(ctx context.Context, i int, id string, hookStarted *metav1.Time) (bool, error) {
	state := &p.st.ContainerRecreateStates[i]
	ok, err := p.stop(ctx, i, id, hookStarted)
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

// stop runs the preStop hook and stops the container's instance id through
// the CRI within the grace period, unless it has exited already; it says
// whether it stopped it. A hook that started before (hookStarted, from the
// request's status: the daemon restarted while it ran) is not run again,
// and the grace is counted from its start. Neither the hook nor the stop
// is made once the pod is being deleted (errPodDeleting).
func (p *pass) stop(ctx context.Context, i int, id string, hookStarted *metav1.Time) (bool, error) {
	c, pod, deadline := &p.crr.Spec.Containers[i], p.pod, p.deadline
	log := logr.FromContextOrDiscard(ctx).WithValues("container", c.Name, "containerID", id)
	grace := defaultGrace
	if g := p.strategy.TerminationGracePeriodSeconds; g != nil {
		grace = v1beta1.SecondsDuration(*g)
	}
	pctx, cancelGrace := context.WithTimeout(ctx, grace)
	defer cancelGrace()
	if !deadline.IsZero() {
		var cancelDeadline context.CancelFunc
		pctx, cancelDeadline = context.WithDeadline(pctx, deadline)
		defer cancelDeadline()
	}
	// A container that has exited (by a crash, or by this request's stop
	// seen through a stale cache) gets neither its preStop nor a stop.
	if cur, err := p.rt.Runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id}); err == nil &&
		cur.Status.GetState() == runtimeapi.ContainerState_CONTAINER_EXITED {
		log.Info("container already exited; not running its preStop or stopping it")
		return false, nil
	}
	if p.e.deleting(pod) {
		log.Info("the pod is being deleted; not running the container's preStop or stopping it")
		return false, errPodDeleting
	}
	start := time.Now()
	if hookStarted != nil {
		start = hookStarted.Time
		log.Info("preStop started before the daemon restarted; not running it again", "started", start.UTC().Format(time.RFC3339))
	} else {
		if err := p.preStop(pctx, c, id); err != nil {
			log.Info("preStop failed; stopping anyway", "error", err.Error())
			p.event(corev1.EventTypeWarning, "PreStopFailed", "container %s: %v; stopping it anyway", c.Name, err)
		}
		phaseSeconds.WithLabelValues("prestop").Observe(time.Since(start).Seconds())
	}
	if !deadline.IsZero() && !time.Now().Before(deadline) {
		return false, fmt.Errorf("stop container %s of pod %s/%s: activeDeadlineSeconds passed during preStop; not stopped", c.Name, pod.Namespace, pod.Name)
	}
	if p.e.deleting(pod) {
		log.Info("the pod is being deleted since the preStop started; not stopping the container")
		return false, errPodDeleting
	}
	// What is left of the grace, and no more than is left until the
	// request's deadline: a request never stops a container after it
	// ended. The runtime's call always has a deadline, with or without
	// the request's: that grace, then the runtime's kill.
	now := time.Now()
	left := max(0, grace-now.Sub(start))
	if !deadline.IsZero() {
		left = min(left, max(0, deadline.Sub(now)))
	}
	stopCtx, cancelStop := context.WithDeadline(ctx, now.Add(left).Add(stopKillMargin))
	defer cancelStop()
	seconds := int64(math.Ceil(left.Seconds()))
	log.Info("stopping container", "grace", left.Round(time.Second).String())
	p.event(corev1.EventTypeNormal, "StoppingContainer", "container %s (grace %s)", c.Name, left.Round(time.Second))
	stopStart := time.Now()
	if _, err := p.rt.Runtime.StopContainer(stopCtx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: seconds}); err != nil && status.Code(err) != codes.NotFound {
		return false, fmt.Errorf("stop container %s of pod %s/%s: %w", c.Name, pod.Namespace, pod.Name, err)
	}
	phaseSeconds.WithLabelValues("stop").Observe(time.Since(stopStart).Seconds())
	p.e.stops.Store(stopKey(p.crr.UID, c.Name), &stopRecord{at: time.Now()})
	log.Info("stopped container", "took", time.Since(stopStart).Round(time.Millisecond).String())
	return true, nil
}
