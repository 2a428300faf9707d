package scale

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
)

// simulatedNodePrefix starts the name of every simulated node (kwok-0000,
// ...): the requests of pods there are the stand-in's.
const simulatedNodePrefix = "kwok-"

// standIn is the benchmark's stand-in executor: on the simulated nodes no
// daemon and no kubelet run, so it carries out the ContainerRecreateRequests
// of their pods itself, as they would together. For each request, one at a
// time per pod in the order it sees them, it
//
//  1. "stops" the request's containers: writes the pod's status as the
//     kubelet would after a restart, each container with a new containerID,
//     restartCount + 1, its last state terminated with the old ID, not
//     ready, and the pod's Ready and ContainersReady conditions False;
//  2. marks the request Recreating, its containers stopped;
//  3. waits a delay drawn from the requests' durations measured on the real
//     node (created to Completed, through the real daemon, containerd and
//     kubelet: see measureRestarts), and minStartedSeconds if longer;
//  4. makes the containers and the pod Ready again and the request
//     Completed, each container Succeeded.
//
// It runs no preStop hook and honours no unready grace (the benchmark's
// namespaces are opted out of the readiness gate). It never writes the pod's phase:
// kwok's stage would take a Pending pod for a new one.
type standIn struct {
	crrs   client.WithWatch
	kube   kubernetes.Interface
	delays []time.Duration

	mu   sync.Mutex
	rand *rand.Rand
	// taken are the requests it carries out or did, by UID.
	taken map[types.UID]bool
	// seen is when each pod's first request arrived, by pod UID: the
	// reaction measurement reads it.
	seen map[string]time.Time
	// slept are the delays it waited, for the report; spent what each
	// completed request took it beyond its delay (its reads and writes).
	slept, spent []time.Duration
	// completed counts the requests it completed; errs what went wrong.
	completed int
	errs      []string
	// pods serialises the requests of one pod, by pod UID.
	pods map[string]*sync.Mutex
	// active counts, by namespace, the requests taken and not yet done
	// with; most is the largest count since resetMost.
	active, most map[string]int

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// startStandIn starts carrying out the simulated pods' requests, with
// delays drawn from delays.
func startStandIn(ctx context.Context, crrs client.WithWatch, kube kubernetes.Interface, delays []time.Duration) *standIn {
	ctx, cancel := context.WithCancel(ctx)
	s := &standIn{
		crrs: crrs, kube: kube, delays: delays, cancel: cancel,
		rand:  rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 27)),
		taken: map[types.UID]bool{}, seen: map[string]time.Time{}, pods: map[string]*sync.Mutex{},
		active: map[string]int{}, most: map[string]int{},
	}
	s.wg.Go(func() { s.watch(ctx) })
	return s
}

// stop ends the stand-in.
func (s *standIn) stop() {
	s.cancel()
	s.wg.Wait()
}

// problems are what went wrong so far.
func (s *standIn) problems() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.errs)
}

// watch lists and watches every request, again whenever the watch ends.
func (s *standIn) watch(ctx context.Context) {
	for ctx.Err() == nil {
		list := &v1beta1.ContainerRecreateRequestList{}
		if err := s.crrs.List(ctx, list); err != nil {
			time.Sleep(time.Second)
			continue
		}
		for i := range list.Items {
			s.take(ctx, &list.Items[i])
		}
		w, err := s.crrs.Watch(ctx, &v1beta1.ContainerRecreateRequestList{}, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
		if err != nil {
			time.Sleep(time.Second)
			continue
		}
		for ev := range w.ResultChan() {
			if crr, ok := ev.Object.(*v1beta1.ContainerRecreateRequest); ok && (ev.Type == watch.Added || ev.Type == watch.Modified) {
				s.take(ctx, crr)
			}
		}
		w.Stop()
	}
}

// take starts carrying out a request of a simulated pod it has not taken.
func (s *standIn) take(ctx context.Context, crr *v1beta1.ContainerRecreateRequest) {
	if !strings.HasPrefix(crr.Labels[v1beta1.NodeNameLabel], simulatedNodePrefix) || crr.Status.Phase == v1beta1.PhaseCompleted || crr.DeletionTimestamp != nil {
		return
	}
	podUID := crr.Labels[v1beta1.PodUIDLabel]
	s.mu.Lock()
	if s.taken[crr.UID] {
		s.mu.Unlock()
		return
	}
	s.taken[crr.UID] = true
	if _, ok := s.seen[podUID]; !ok {
		s.seen[podUID] = time.Now()
	}
	lock := s.pods[podUID]
	if lock == nil {
		lock = &sync.Mutex{}
		s.pods[podUID] = lock
	}
	ns := crr.Namespace
	s.active[ns]++
	s.most[ns] = max(s.most[ns], s.active[ns])
	s.mu.Unlock()
	s.wg.Go(func() {
		lock.Lock()
		defer lock.Unlock()
		err := s.carryOut(ctx, crr.DeepCopy())
		s.mu.Lock()
		defer s.mu.Unlock()
		s.active[ns]--
		if err != nil && ctx.Err() == nil {
			s.errs = append(s.errs, err.Error())
		}
	})
}

// resetMost starts counting the most requests of namespace ns in progress
// at once afresh.
func (s *standIn) resetMost(ns string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.most[ns] = s.active[ns]
}

// mostActive is the most requests of namespace ns the stand-in had in
// progress at once since resetMost: every one of them the manager counts
// as a pod unavailable.
func (s *standIn) mostActive(ns string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.most[ns]
}

// seenAt is when the first request of the pod arrived, if one did.
func (s *standIn) seenAt(podUID types.UID) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.seen[string(podUID)]
	return t, ok
}

// report is how many requests the stand-in completed, the median of the
// delays it waited, and the median of what its requests took beyond them.
func (s *standIn) report() (int, time.Duration, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.completed, quantile(s.slept, 0.5), quantile(s.spent, 0.5)
}

// delay draws one of the measured durations.
func (s *standIn) delay() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.delays[s.rand.IntN(len(s.delays))]
	s.slept = append(s.slept, d)
	return d
}

// carryOut runs one request to Completed, or leaves it to the manager when
// its pod is gone, replaced or being deleted. Its pickup and the stop are
// one status write (the daemon writes them apart): on a busy API server
// every call of the stand-in's is time the run waits for.
func (s *standIn) carryOut(ctx context.Context, crr *v1beta1.ContainerRecreateRequest) error {
	start := time.Now()
	pod, restarted, err := s.restartContainers(ctx, crr)
	if err != nil || pod == nil {
		return err
	}
	if err := s.writeStatus(ctx, crr, func(st *v1beta1.ContainerRecreateRequestStatus) {
		st.Phase = v1beta1.PhaseRecreating
		st.ContainerRecreateStates = states(crr, v1beta1.PhaseRecreating, true)
	}); err != nil {
		return err
	}
	delay := s.delay()
	wait := delay
	if crr.Spec.Strategy != nil {
		wait = max(wait, time.Duration(crr.Spec.Strategy.MinStartedSeconds)*time.Second)
	}
	select {
	case <-ctx.Done():
		return nil
	case <-time.After(wait - time.Since(restarted)):
	}
	if pod, err := s.readyAgain(ctx, crr, pod); err != nil || pod == nil {
		return err
	}
	err = s.writeStatus(ctx, crr, func(st *v1beta1.ContainerRecreateRequestStatus) {
		now := metav1.Now()
		st.Phase, st.CompletionTime, st.Message = v1beta1.PhaseCompleted, &now, ""
		st.ContainerRecreateStates = states(crr, v1beta1.PhaseSucceeded, true)
		st.Result = v1beta1.ResultOf(st.ContainerRecreateStates)
	})
	if err == nil {
		s.mu.Lock()
		s.completed++
		s.spent = append(s.spent, time.Since(start)-delay)
		s.mu.Unlock()
	}
	return err
}

// states is one state per container of the request, all in phase.
func states(crr *v1beta1.ContainerRecreateRequest, phase v1beta1.ContainerRecreateRequestPhase, killed bool) []v1beta1.ContainerRecreateRequestContainerRecreateState {
	out := make([]v1beta1.ContainerRecreateRequestContainerRecreateState, 0, len(crr.Spec.Containers))
	for _, c := range crr.Spec.Containers {
		out = append(out, v1beta1.ContainerRecreateRequestContainerRecreateState{Name: c.Name, Phase: phase, IsKilled: killed})
	}
	return out
}

// writeStatus changes the request's status and writes it with its
// resourceVersion, reading it again on a conflict (the manager writes its
// status too).
func (s *standIn) writeStatus(ctx context.Context, crr *v1beta1.ContainerRecreateRequest, change func(*v1beta1.ContainerRecreateRequestStatus)) error {
	first := true
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if !first {
			if err := s.crrs.Get(ctx, client.ObjectKeyFromObject(crr), crr); err != nil {
				return err
			}
		}
		first = false
		change(&crr.Status)
		return s.crrs.Status().Update(ctx, crr)
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("stand-in: write the status of ContainerRecreateRequest %s/%s: %w", crr.Namespace, crr.Name, err)
	}
	return nil
}

// restartContainers writes the pod's status as the kubelet reports a
// restart of the request's containers, and returns the pod as written and
// when; a nil pod when the pod is not the request's any more (gone,
// replaced, being deleted).
func (s *standIn) restartContainers(ctx context.Context, crr *v1beta1.ContainerRecreateRequest) (*corev1.Pod, time.Time, error) {
	var at time.Time
	pod, err := s.patchPod(ctx, crr, nil, func(pod *corev1.Pod, now metav1.Time) {
		at = now.Time
		for i := range pod.Status.ContainerStatuses {
			cs := &pod.Status.ContainerStatuses[i]
			if !requested(crr, cs.Name) {
				continue
			}
			var started metav1.Time
			if r := cs.State.Running; r != nil {
				started = r.StartedAt
			}
			cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 0, Reason: "Completed", StartedAt: started, FinishedAt: now, ContainerID: cs.ContainerID,
			}}
			cs.RestartCount++
			sum := sha256.Sum256(fmt.Appendf(nil, "%s/%s/%d", pod.UID, cs.Name, cs.RestartCount))
			cs.ContainerID = "containerd://" + hex.EncodeToString(sum[:])
			cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}
			cs.Ready, cs.Started = false, new(true)
		}
		setReady(pod, now)
	})
	return pod, at, err
}

// readyAgain makes the request's containers ready, and the pod when all
// of its containers are, starting from the pod as last written.
func (s *standIn) readyAgain(ctx context.Context, crr *v1beta1.ContainerRecreateRequest, last *corev1.Pod) (*corev1.Pod, error) {
	return s.patchPod(ctx, crr, last, func(pod *corev1.Pod, now metav1.Time) {
		for i := range pod.Status.ContainerStatuses {
			if cs := &pod.Status.ContainerStatuses[i]; requested(crr, cs.Name) {
				cs.Ready = true
			}
		}
		setReady(pod, now)
	})
}

func requested(crr *v1beta1.ContainerRecreateRequest, container string) bool {
	return slices.ContainsFunc(crr.Spec.Containers, func(c v1beta1.ContainerRecreateRequestContainer) bool { return c.Name == container })
}

// setReady sets the pod's Ready and ContainersReady conditions from its
// containers, as the kubelet does (the benchmark's pods have no readiness
// gate).
func setReady(pod *corev1.Pod, now metav1.Time) {
	ready := !slices.ContainsFunc(pod.Status.ContainerStatuses, func(cs corev1.ContainerStatus) bool { return !cs.Ready })
	status, reason := corev1.ConditionTrue, ""
	if !ready {
		status, reason = corev1.ConditionFalse, "ContainersNotReady"
	}
	for _, t := range []corev1.PodConditionType{corev1.PodReady, corev1.ContainersReady} {
		c := pods.Condition(pod, t)
		if c == nil {
			pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: t})
			c = &pod.Status.Conditions[len(pod.Status.Conditions)-1]
		}
		if c.Status != status {
			c.LastTransitionTime = now
		}
		c.Status, c.Reason = status, reason
	}
}

// patchPod changes the request's pod's status and writes the containers'
// statuses and the conditions back with the resourceVersion it started
// from: last, the pod as the stand-in last wrote it, or the pod read anew
// (and again on a conflict). It returns the pod as written, nil when the
// pod is not the request's any more.
func (s *standIn) patchPod(ctx context.Context, crr *v1beta1.ContainerRecreateRequest, last *corev1.Pod, change func(*corev1.Pod, metav1.Time)) (*corev1.Pod, error) {
	var written *corev1.Pod
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		pod := last
		last = nil
		if pod == nil {
			var err error
			pod, err = s.kube.CoreV1().Pods(crr.Namespace).Get(ctx, crr.Spec.PodName, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			if err != nil {
				return err
			}
		}
		if string(pod.UID) != crr.Labels[v1beta1.PodUIDLabel] || pod.DeletionTimestamp != nil {
			return nil
		}
		pod = pod.DeepCopy()
		change(pod, metav1.Now())
		patch, err := statusPatch(pod, pod.ResourceVersion)
		if err != nil {
			return err
		}
		written, err = s.kube.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("stand-in: write the status of pod %s/%s for ContainerRecreateRequest %s: %w", crr.Namespace, crr.Spec.PodName, crr.Name, err)
	}
	return written, nil
}

// statusPatch is the strategic merge patch that writes the pod's
// containers' statuses (an atomic list: all of them) and its conditions
// (merged by type), as the kubelet reports them; on condition that the
// pod is still at version, when one is given.
func statusPatch(pod *corev1.Pod, version string) ([]byte, error) {
	patch := map[string]any{"status": map[string]any{"containerStatuses": pod.Status.ContainerStatuses, "conditions": pod.Status.Conditions}}
	if version != "" {
		patch["metadata"] = map[string]any{"resourceVersion": version}
	}
	return json.Marshal(patch)
}
