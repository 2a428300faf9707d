package executor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

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

// pass is one pass over a request: what each of its steps reads (the
// executor, the request, its pod, the node's runtime, the request's
// strategy and deadline) and the status it builds. A stop that goes on in
// the background takes a copy of its own (see stopInBackground).
type pass struct {
	e        *Executor
	crr      *v1beta1.ContainerRecreateRequest
	pod      *corev1.Pod
	rt       *cri.Client
	strategy v1beta1.ContainerRecreateRequestStrategy
	// deadline is when the request's activeDeadlineSeconds passes; the
	// zero time, for a request without one, is no deadline.
	deadline time.Time
	// st is the status the pass builds, written by write.
	st *v1beta1.ContainerRecreateRequestStatus
}

// newPass begins a pass over the request on its pod through the runtime.
func (e *Executor) newPass(crr *v1beta1.ContainerRecreateRequest, pod *corev1.Pod, rt *cri.Client) *pass {
	deadline, _ := crr.Deadline()
	st := crr.Status.DeepCopy()
	st.ContainerRecreateStates = crr.States()
	return &pass{e: e, crr: crr, pod: pod, rt: rt, strategy: crr.EffectiveStrategy(), deadline: deadline, st: st}
}

// run advances the request as far as it can go now and writes its status:
// each container's stop is recorded as soon as it happens, the rest once.
func (p *pass) run(ctx context.Context) (Result, error) {
	now := p.e.Clock.Now()
	if !p.deadline.IsZero() && !now.Before(p.deadline) {
		// Nothing more is stopped; the manager ends the request.
		return Result{}, nil
	}
	p.st.Phase = v1beta1.PhaseRecreating
	wait, why, err := p.unreadyGrace(ctx, now)
	if err != nil {
		return Result{}, err
	}
	if why != "" {
		p.st.Message = why
		return Result{RequeueAfter: wait}, p.write(ctx)
	}
	p.st.Message = ""
	failUnrecreatable(p.crr, p.pod, p.st)
	wake, err := p.advanceInOrder(ctx)
	if err != nil {
		return Result{}, err
	}
	failFast(p.st, p.strategy)
	p.st.ContainerStatusSnapshot = snapshot(p.crr, p.pod, p.st)
	if p.st.AllFinished() {
		t := metav1.NewTime(p.e.Clock.Now())
		p.st.Phase, p.st.CompletionTime = v1beta1.PhaseCompleted, &t
		p.st.Result = v1beta1.ResultOf(p.st.ContainerRecreateStates)
		for _, cs := range p.st.ContainerRecreateStates {
			recreations.WithLabelValues(string(cs.Phase)).Inc()
		}
	}
	if !p.deadline.IsZero() {
		wake = append(wake, p.deadline.Sub(p.e.Clock.Now()))
	}
	return Result{RequeueAfter: v1beta1.SoonestWake(wake)}, p.write(ctx)
}

// write writes a copy of the status the pass has built so far.
func (p *pass) write(ctx context.Context) error {
	st := p.st.DeepCopy()
	return p.e.writeStatus(ctx, p.crr, func(w *v1beta1.ContainerRecreateRequestStatus) { *w = *st })
}

// advanceInOrder advances the unfinished containers in stopOrder and stops
// at most one of them at a time: a container lets the next one go once it
// is past its stop (stopped, exited by itself, or replaced by the
// kubelet), or with orderedRecreate once it has finished. A stop made
// within the pass lets the next container be stopped in the same pass; a
// stop that goes on in the background (under Run) holds the next ones
// until a later pass records it. It returns when to look again.
func (p *pass) advanceInOrder(ctx context.Context) ([]time.Duration, error) {
	order := stopOrder(p.crr, p.pod)
	var wake []time.Duration
	for k, i := range order {
		state := &p.st.ContainerRecreateStates[i]
		if state.Finished() {
			continue
		}
		if failFast(p.st, p.strategy) {
			break
		}
		m, err := p.advance(ctx, i)
		if err != nil {
			return wake, err
		}
		wake = append(wake, m.wake)
		if m.stop != "" {
			stopped, err := p.stopOne(ctx, i, m.stop)
			if err != nil || !stopped {
				p.waitBehind(order[k+1:], i)
				return wake, err
			}
			m.past = true
		}
		if !m.past || p.strategy.OrderedRecreate && !state.Finished() {
			p.waitBehind(order[k+1:], i)
			return wake, nil
		}
	}
	return wake, nil
}

// waitBehind says, in the state of each container of behind not yet
// begun, which container it waits for.
func (p *pass) waitBehind(behind []int, first int) {
	why := fmt.Sprintf("waiting for container %s to be stopped first: containers are stopped one after another", p.crr.Spec.Containers[first].Name)
	if p.strategy.OrderedRecreate {
		why = fmt.Sprintf("waiting for container %s to be recreated and started first (orderedRecreate)", p.crr.Spec.Containers[first].Name)
	}
	for _, i := range behind {
		if s := &p.st.ContainerRecreateStates[i]; s.Phase == v1beta1.PhasePending {
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
func (p *pass) stopOne(ctx context.Context, i int, id string) (bool, error) {
	c, s := &p.crr.Spec.Containers[i], &p.st.ContainerRecreateStates[i]
	var resumed *metav1.Time
	if c.PreStop != nil && s.PreStopStartedAt != nil {
		resumed = s.PreStopStartedAt
	} else {
		if c.PreStop != nil {
			now := metav1.NewTime(p.e.Clock.Now())
			s.PreStopStartedAt = &now
		}
		// Recorded before anything is stopped, with the request's
		// resourceVersion: the manager, which ends a request it finds
		// not begun (Rejuv paused), either ends it first, and this write
		// fails, or finds it Recreating.
		s.Message = stoppingMessage
		if err := p.write(ctx); err != nil {
			return false, err
		}
	}
	if p.e.requeue != nil {
		p.stopInBackground(ctx, i, id, resumed)
		return false, nil
	}
	stopped, err := p.stopInstance(ctx, i, id, resumed)
	if stopped {
		// Recorded at once: a restarted daemon must not stop it again.
		if werr := p.write(ctx); werr != nil {
			return true, errors.Join(err, werr)
		}
	}
	return stopped, err
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
func (p *pass) advance(ctx context.Context, i int) (move, error) {
	c, state := &p.crr.Spec.Containers[i], &p.st.ContainerRecreateStates[i]
	state.Phase = v1beta1.PhaseRecreating
	if _, ok := p.e.stopping.Load(stopKey(p.crr.UID, c.Name)); ok {
		state.Message = stoppingMessage
		return move{}, nil
	}
	if _, ok := p.e.stopped(p.crr, c.Name); ok {
		state.IsKilled = true
	}
	cs := pods.ContainerStatus(p.pod, c.Name)
	in, err := newestInstance(ctx, p.rt, p.pod, c.Name)
	if err != nil {
		return move{}, err
	}
	if in == nil {
		p.awaitKubelet(cs, state)
		return move{past: true}, nil
	}
	if in.since(p.crr, state) {
		if in.reported(cs) {
			return move{wake: p.waitStarted(ctx, cs, state), past: true}, nil
		}
		state.Message = "a new container was created; waiting for the kubelet to report it"
		return move{past: true}, nil
	}
	switch {
	case state.IsKilled:
		p.awaitKubelet(cs, state)
		return move{past: true}, nil
	case in.state == runtimeapi.ContainerState_CONTAINER_EXITED:
		state.Message = exitedMessage
		return move{past: true}, nil
	}
	// The instance predates the request and runs, or is starting: an
	// instance the status does not report yet has not finished starting.
	starting := !in.reported(cs) || cs.State.Running == nil || (cs.Started != nil && !*cs.Started)
	if starting && !p.strategy.ForceRecreate {
		state.Message = "waiting for the container to finish starting before stopping it (forceRecreate stops it at once)"
		return move{}, nil
	}
	return move{stop: in.id}, nil
}

// exitedMessage says that a container exited without this request's stop.
const exitedMessage = "the container exited without being stopped; waiting for the kubelet to start a new one"

// waitStarted checks the new container: running (and ready, where it has a
// readiness probe) for minStartedSeconds, counted from its start as the
// runtime reports it (nanoseconds, not the API's seconds).
func (p *pass) waitStarted(ctx context.Context, cs *corev1.ContainerStatus, state *v1beta1.ContainerRecreateRequestContainerRecreateState) time.Duration {
	if cs.State.Running == nil {
		p.awaitKubelet(cs, state)
		return 0
	}
	if spec := pods.FindContainer(p.pod, cs.Name).Spec; spec != nil && spec.ReadinessProbe != nil && !cs.Ready {
		state.Message = "the new container runs; waiting for it to be ready"
		return 0
	}
	startedAt := cs.State.Running.StartedAt.Time
	if st, err := p.rt.Runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: runtimeID(cs.ContainerID)}); err == nil && st.Status.GetStartedAt() > 0 {
		startedAt = time.Unix(0, st.Status.GetStartedAt())
	}
	need := time.Duration(p.strategy.MinStartedSeconds) * time.Second
	if ran := p.e.Clock.Now().Sub(startedAt); ran < need {
		state.Message = fmt.Sprintf("the new container runs; succeeded once it has run %s", need)
		return need - ran
	}
	state.Phase = v1beta1.PhaseSucceeded
	state.Message = ""
	phaseSeconds.WithLabelValues("min_started").Observe(p.e.Clock.Now().Sub(startedAt).Seconds())
	if r, ok := p.e.stopped(p.crr, cs.Name); ok && r.timed.CompareAndSwap(false, true) {
		phaseSeconds.WithLabelValues("restart_wait").Observe(startedAt.Sub(r.at).Seconds())
	}
	return 0
}

// event records an event on the request (related: the pod) and on the pod.
func (p *pass) event(eventType, reason, note string, args ...any) {
	if p.e.Recorder == nil {
		return
	}
	v1beta1.RecordOnBoth(p.e.Recorder, p.crr, p.pod, v1beta1.Event{Type: eventType, Reason: reason, Note: fmt.Sprintf(note, args...)})
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
func (p *pass) awaitKubelet(cs *corev1.ContainerStatus, state *v1beta1.ContainerRecreateRequestContainerRecreateState) {
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
		p.event(corev1.EventTypeWarning, reasonBackOff,
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
func (p *pass) unreadyGrace(ctx context.Context, now time.Time) (time.Duration, string, error) {
	wait, why := graceLeft(p.crr, p.pod, now)
	if why != "" || p.e.Live == nil || !holdsUnready(p.crr, p.pod) {
		return wait, why, nil
	}
	live, err := p.e.Live.GetPod(ctx, p.pod.Namespace, p.pod.Name)
	if err != nil {
		return 0, "", fmt.Errorf("read pod %s/%s before stopping its containers after the unready grace: %w", p.pod.Namespace, p.pod.Name, err)
	}
	if live.UID != p.pod.UID {
		return 0, "", nil
	}
	wait, why = graceLeft(p.crr, live, now)
	return wait, why, nil
}

// holdsUnready says whether the request keeps the pod out of service for
// an unready grace before it stops a container: it asks for one, the pod
// has the KruisePodReady gate, and nothing has been stopped yet.
func holdsUnready(crr *v1beta1.ContainerRecreateRequest, pod *corev1.Pod) bool {
	return crr.EffectiveStrategy().UnreadyGracePeriodSeconds != nil && !crr.AnyKilled() && pods.HasReadinessGate(pod)
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
	g := crr.EffectiveStrategy().UnreadyGracePeriodSeconds
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
