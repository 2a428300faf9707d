package executor

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/daemon/cri"
)

// defaultGrace is the stop grace when the request has none (the webhook
// always sets one from the pod).
const defaultGrace = 30 * time.Second

// stopKillMargin is how long past the grace the runtime's stop call may
// take: the kill after the grace, and the runtime's own work.
const stopKillMargin = 10 * time.Second

// pass advances the request as far as it can go now and writes its status:
// each container's stop is recorded as soon as it happens, the rest once.
func (e *Executor) pass(ctx context.Context, crr *v1beta1.ContainerRecreateRequest, pod *corev1.Pod, rt *cri.Client) (Result, error) {
	now := e.Clock.Now()
	// The zero time, for a request without one, is no deadline below.
	deadline, _ := crr.Deadline()
	if !deadline.IsZero() && !now.Before(deadline) {
		// Nothing more is stopped; the manager ends the request.
		return Result{}, nil
	}
	st := crr.Status.DeepCopy()
	st.Phase = v1beta1.PhaseRecreating
	st.ContainerRecreateStates = statesFor(crr)
	wait, why, err := e.unreadyGrace(ctx, crr, pod, now)
	if err != nil {
		return Result{}, err
	}
	if why != "" {
		st.Message = why
		return Result{RequeueAfter: wait}, e.writeStatus(ctx, crr, func(s *v1beta1.ContainerRecreateRequestStatus) { *s = *st })
	}
	st.Message = ""
	s := strategy(crr)
	failUnrecreatable(crr, pod, st)
	wake, err := e.advanceInOrder(ctx, crr, pod, rt, st, deadline)
	if err != nil {
		return Result{}, err
	}
	failFast(st, s)
	st.ContainerStatusSnapshot = snapshot(crr, pod, st)
	if allFinished(st) {
		t := metav1.NewTime(e.Clock.Now())
		st.Phase, st.CompletionTime = v1beta1.PhaseCompleted, &t
		st.Result = v1beta1.ResultOf(st.ContainerRecreateStates)
		for _, cs := range st.ContainerRecreateStates {
			recreations.WithLabelValues(string(cs.Phase)).Inc()
		}
	}
	if !deadline.IsZero() {
		wake = append(wake, deadline.Sub(e.Clock.Now()))
	}
	return Result{RequeueAfter: v1beta1.SoonestWake(wake)}, e.writeStatus(ctx, crr, func(s *v1beta1.ContainerRecreateRequestStatus) { *s = *st })
}

// move is what advance found for a container: when to look again, the
// instance to stop now (if any), and whether the container is past its
// stop, so that the next one may be stopped.
type move struct {
	wake time.Duration
	stop string
	past bool
}

// advance moves one container on: find its instance that predates the
// request, to be stopped (preStop first) if it has not been, or wait for
// the kubelet's new instance to have run long enough. The instances are
// the runtime's, not only what the pod's status reports: a container the
// kubelet has started but not yet reported (its postStart hook still runs)
// predates the request too, and is what a stop must reach.
func (e *Executor) advance(ctx context.Context, crr *v1beta1.ContainerRecreateRequest, pod *corev1.Pod, rt *cri.Client,
	c *v1beta1.ContainerRecreateRequestContainer, state *v1beta1.ContainerRecreateRequestContainerRecreateState) (move, error) {
	state.Phase = v1beta1.PhaseRecreating
	if _, ok := e.stopping.Load(stopKey(crr.UID, c.Name)); ok {
		state.Message = stoppingMessage
		return move{}, nil
	}
	if _, ok := e.stopped(crr, c.Name); ok {
		state.IsKilled = true
	}
	cs := pods.ContainerStatus(pod, c.Name)
	in, err := newestInstance(ctx, rt, pod, c.Name)
	if err != nil {
		return move{}, err
	}
	if in == nil {
		e.awaitKubelet(crr, pod, cs, state)
		return move{past: true}, nil
	}
	if in.since(crr, state) {
		if in.reported(cs) {
			return move{wake: e.waitStarted(ctx, crr, pod, rt, cs, state), past: true}, nil
		}
		state.Message = "a new container was created; waiting for the kubelet to report it"
		return move{past: true}, nil
	}
	switch {
	case state.IsKilled:
		e.awaitKubelet(crr, pod, cs, state)
		return move{past: true}, nil
	case in.state == runtimeapi.ContainerState_CONTAINER_EXITED:
		state.Message = exitedMessage
		return move{past: true}, nil
	}
	// The instance predates the request and runs, or is starting: an
	// instance the status does not report yet has not finished starting.
	starting := !in.reported(cs) || cs.State.Running == nil || (cs.Started != nil && !*cs.Started)
	if starting && !strategy(crr).ForceRecreate {
		state.Message = "waiting for the container to finish starting before stopping it (forceRecreate stops it at once)"
		return move{}, nil
	}
	return move{stop: in.id}, nil
}

// exitedMessage says that a container exited without this request's stop.
const exitedMessage = "the container exited without being stopped; waiting for the kubelet to start a new one"

// stop runs the preStop hook and stops the container's instance id through
// the CRI within the grace period, unless it has exited already; it says
// whether it stopped it. A hook that started before (hookStarted, from the
// request's status: the daemon restarted while it ran) is not run again,
// and the grace is counted from its start. Neither the hook nor the stop
// is made once the pod is being deleted (errPodDeleting).
func (e *Executor) stop(ctx context.Context, crr *v1beta1.ContainerRecreateRequest, pod *corev1.Pod, rt *cri.Client, c *v1beta1.ContainerRecreateRequestContainer, id string, hookStarted *metav1.Time, deadline time.Time) (bool, error) {
	log := logr.FromContextOrDiscard(ctx).WithValues("container", c.Name, "containerID", id)
	grace := defaultGrace
	if g := strategy(crr).TerminationGracePeriodSeconds; g != nil {
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
	if cur, err := rt.Runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id}); err == nil &&
		cur.Status.GetState() == runtimeapi.ContainerState_CONTAINER_EXITED {
		log.Info("container already exited; not running its preStop or stopping it")
		return false, nil
	}
	if e.deleting(pod) {
		log.Info("the pod is being deleted; not running the container's preStop or stopping it")
		return false, errPodDeleting
	}
	start := time.Now()
	if hookStarted != nil {
		start = hookStarted.Time
		log.Info("preStop started before the daemon restarted; not running it again", "started", start.UTC().Format(time.RFC3339))
	} else {
		if err := preStop(pctx, rt.Runtime, c.PreStop, id, pod, c.Ports); err != nil {
			log.Info("preStop failed; stopping anyway", "error", err.Error())
			e.event(crr, pod, corev1.EventTypeWarning, "PreStopFailed", "container %s: %v; stopping it anyway", c.Name, err)
		}
		phaseSeconds.WithLabelValues("prestop").Observe(time.Since(start).Seconds())
	}
	if !deadline.IsZero() && !time.Now().Before(deadline) {
		return false, fmt.Errorf("stop container %s of pod %s/%s: activeDeadlineSeconds passed during preStop; not stopped", c.Name, pod.Namespace, pod.Name)
	}
	if e.deleting(pod) {
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
	e.event(crr, pod, corev1.EventTypeNormal, "StoppingContainer", "container %s (grace %s)", c.Name, left.Round(time.Second))
	stopStart := time.Now()
	if _, err := rt.Runtime.StopContainer(stopCtx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: seconds}); err != nil && status.Code(err) != codes.NotFound {
		return false, fmt.Errorf("stop container %s of pod %s/%s: %w", c.Name, pod.Namespace, pod.Name, err)
	}
	phaseSeconds.WithLabelValues("stop").Observe(time.Since(stopStart).Seconds())
	e.stops.Store(stopKey(crr.UID, c.Name), &stopRecord{at: time.Now()})
	log.Info("stopped container", "took", time.Since(stopStart).Round(time.Millisecond).String())
	return true, nil
}

// waitStarted checks the new container: running (and ready, where it has a
// readiness probe) for minStartedSeconds, counted from its start as the
// runtime reports it (nanoseconds, not the API's seconds).
func (e *Executor) waitStarted(ctx context.Context, crr *v1beta1.ContainerRecreateRequest, pod *corev1.Pod, rt *cri.Client,
	cs *corev1.ContainerStatus, state *v1beta1.ContainerRecreateRequestContainerRecreateState) time.Duration {
	if cs.State.Running == nil {
		e.awaitKubelet(crr, pod, cs, state)
		return 0
	}
	if spec := pods.FindContainer(pod, cs.Name).Spec; spec != nil && spec.ReadinessProbe != nil && !cs.Ready {
		state.Message = "the new container runs; waiting for it to be ready"
		return 0
	}
	startedAt := cs.State.Running.StartedAt.Time
	if st, err := rt.Runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: runtimeID(cs.ContainerID)}); err == nil && st.Status.GetStartedAt() > 0 {
		startedAt = time.Unix(0, st.Status.GetStartedAt())
	}
	need := time.Duration(strategy(crr).MinStartedSeconds) * time.Second
	if ran := e.Clock.Now().Sub(startedAt); ran < need {
		state.Message = fmt.Sprintf("the new container runs; succeeded once it has run %s", need)
		return need - ran
	}
	state.Phase = v1beta1.PhaseSucceeded
	state.Message = ""
	phaseSeconds.WithLabelValues("min_started").Observe(e.Clock.Now().Sub(startedAt).Seconds())
	if r, ok := e.stopped(crr, cs.Name); ok && r.timed.CompareAndSwap(false, true) {
		phaseSeconds.WithLabelValues("restart_wait").Observe(startedAt.Sub(r.at).Seconds())
	}
	return 0
}

// event records an event on the request (related: the pod) and on the pod.
func (e *Executor) event(crr *v1beta1.ContainerRecreateRequest, pod *corev1.Pod, eventType, reason, note string, args ...any) {
	if e.Recorder == nil {
		return
	}
	msg := fmt.Sprintf(note, args...)
	e.Recorder.Eventf(crr, pod, eventType, reason, "Recreate", "%s", msg)
	e.Recorder.Eventf(pod, crr, eventType, reason, "Recreate", "%s (ContainerRecreateRequest %s)", msg, crr.Name)
}

// reasonBackOff is the event saying a recreation waits for the kubelet's
// restart back-off.
const reasonBackOff = "RecreateBackOff"

// awaitKubelet says in state what the kubelet is doing with the stopped
// container. When the kubelet holds the restart in its crash-loop back-off
// (the instance stopped was itself a restart that ran less than 10
// minutes: the kubelet reports the back-off late, if at all, so the
// container's status foretells it), it says so, and the first time in a
// RecreateBackOff event on the request and pod: why the recreation is slow.
func (e *Executor) awaitKubelet(crr *v1beta1.ContainerRecreateRequest, pod *corev1.Pod, cs *corev1.ContainerStatus, state *v1beta1.ContainerRecreateRequestContainerRecreateState) {
	why := ""
	if cs != nil && cs.State.Waiting != nil && cs.State.Waiting.Reason == "CrashLoopBackOff" {
		why = cs.State.Waiting.Message
	} else if ran, ahead := pods.BackOffAhead(cs); ahead {
		why = fmt.Sprintf("the container stopped was the kubelet's restart %d and ran %s, less than %s: the kubelet waits 10s or more (doubling with each restart in that window, up to 5m) before starting it again",
			cs.RestartCount, ran.Round(time.Second), pods.BackOffWindow)
	}
	if why == "" {
		state.Message = "stopped; waiting for the kubelet to start a new container"
		return
	}
	if !strings.HasPrefix(state.Message, v1beta1.BackOffMessage) {
		e.event(crr, pod, corev1.EventTypeWarning, reasonBackOff,
			"container %s: the kubelet holds its restart in the crash-loop back-off, as for any container it restarted less than %s before: %s", cs.Name, pods.BackOffWindow, why)
	}
	state.Message = v1beta1.BackOffMessage + why
}

// unreadyGrace says how long to wait before stopping anything, and why
// (graceLeft), from the cache; once the cache says the grace is over, the
// pod is read again from the API server and the grace judged from that.
// A cache that lags (its watch backing off after the API server
// restarted) may show the pod not ready since long before, from an
// earlier moment, while it is Ready and in its Services: stopping then
// would fail its clients' requests.
func (e *Executor) unreadyGrace(ctx context.Context, crr *v1beta1.ContainerRecreateRequest, pod *corev1.Pod, now time.Time) (time.Duration, string, error) {
	wait, why := graceLeft(crr, pod, now)
	if why != "" || e.Live == nil || !holdsUnready(crr, pod) {
		return wait, why, nil
	}
	live, err := e.Live.GetPod(ctx, pod.Namespace, pod.Name)
	if err != nil {
		return 0, "", fmt.Errorf("read pod %s/%s before stopping its containers after the unready grace: %w", pod.Namespace, pod.Name, err)
	}
	if live.UID != pod.UID {
		return 0, "", nil
	}
	wait, why = graceLeft(crr, live, now)
	return wait, why, nil
}

// holdsUnready says whether the request keeps the pod out of service for
// an unready grace before it stops a container: it asks for one, the pod
// has the KruisePodReady gate, and nothing has been stopped yet.
func holdsUnready(crr *v1beta1.ContainerRecreateRequest, pod *corev1.Pod) bool {
	return strategy(crr).UnreadyGracePeriodSeconds != nil && !anyKilled(crr) && pods.HasReadinessGate(pod)
}

// graceLeft says how long to wait before stopping anything, and why:
// with unreadyGracePeriodSeconds and the pod's KruisePodReady gate, the
// manager first makes the pod unready (PreRecreateGrace), the kubelet then
// turns the pod's Ready condition False, and the grace runs from there.
// The API's timestamps have one-second resolution, so the grace starts at
// the next full second after that transition: the pod is out of service for
// at least the grace. Pods without the gate are not held.
func graceLeft(crr *v1beta1.ContainerRecreateRequest, pod *corev1.Pod, now time.Time) (time.Duration, string) {
	if !holdsUnready(crr, pod) {
		return 0, ""
	}
	g := strategy(crr).UnreadyGracePeriodSeconds
	if !meta.IsStatusConditionTrue(crr.Status.Conditions, v1beta1.ConditionPreRecreateGrace) {
		return time.Second, "waiting for the manager to make the pod unready"
	}
	ready := pods.Condition(pod, corev1.PodReady)
	if ready == nil || ready.Status == corev1.ConditionTrue {
		return time.Second, "waiting for the kubelet to report the pod not ready"
	}
	until := ready.LastTransitionTime.Add(time.Second + v1beta1.SecondsDuration(*g))
	if now.Before(until) {
		return until.Sub(now), fmt.Sprintf("the pod is not ready; containers are stopped after the unready grace (%ds)", *g)
	}
	return 0, ""
}

func anyKilled(crr *v1beta1.ContainerRecreateRequest) bool {
	for _, s := range crr.Status.ContainerRecreateStates {
		if s.IsKilled {
			return true
		}
	}
	return false
}

func strategy(crr *v1beta1.ContainerRecreateRequest) v1beta1.ContainerRecreateRequestStrategy {
	if crr.Spec.Strategy == nil {
		return v1beta1.ContainerRecreateRequestStrategy{}
	}
	return *crr.Spec.Strategy
}

// statesFor returns one state per container, keeping the recorded ones.
func statesFor(crr *v1beta1.ContainerRecreateRequest) []v1beta1.ContainerRecreateRequestContainerRecreateState {
	byName := map[string]v1beta1.ContainerRecreateRequestContainerRecreateState{}
	for _, s := range crr.Status.ContainerRecreateStates {
		byName[s.Name] = s
	}
	out := make([]v1beta1.ContainerRecreateRequestContainerRecreateState, len(crr.Spec.Containers))
	for i, c := range crr.Spec.Containers {
		s, ok := byName[c.Name]
		if !ok {
			s = v1beta1.ContainerRecreateRequestContainerRecreateState{Name: c.Name, Phase: v1beta1.PhasePending}
		}
		out[i] = s
	}
	return out
}

func finished(s *v1beta1.ContainerRecreateRequestContainerRecreateState) bool {
	return s.Phase == v1beta1.PhaseSucceeded || s.Phase == v1beta1.PhaseFailed
}

func allFinished(st *v1beta1.ContainerRecreateRequestStatus) bool {
	for i := range st.ContainerRecreateStates {
		if !finished(&st.ContainerRecreateStates[i]) {
			return false
		}
	}
	return true
}

func failRest(st *v1beta1.ContainerRecreateRequestStatus, why string) {
	for i := range st.ContainerRecreateStates {
		s := &st.ContainerRecreateStates[i]
		if !finished(s) {
			s.Phase, s.Message = v1beta1.PhaseFailed, why
		}
	}
}
