package executor

import (
	"context"
	"fmt"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/daemon/cri"
)

// runtimeOf is a runtime holding instances of the pod "web"'s container
// "app", which records what it is asked to stop.
type runtimeOf struct {
	runtimeapi.RuntimeServiceClient
	instances []*runtimeapi.Container
	stopped   []string
}

func (r *runtimeOf) add(id string, attempt uint32, created time.Time, state runtimeapi.ContainerState) {
	r.instances = append(r.instances, &runtimeapi.Container{
		Id: id, Metadata: &runtimeapi.ContainerMetadata{Name: "app", Attempt: attempt}, CreatedAt: created.UnixNano(), State: state,
		Labels: map[string]string{kubeletPodUIDLabel: "uid-web", kubeletContainerNameLabel: "app"},
	})
}

func (r *runtimeOf) ListContainers(_ context.Context, in *runtimeapi.ListContainersRequest, _ ...grpc.CallOption) (*runtimeapi.ListContainersResponse, error) {
	var out []*runtimeapi.Container
	for _, c := range r.instances {
		match := true
		for k, v := range in.GetFilter().GetLabelSelector() {
			match = match && c.Labels[k] == v
		}
		if match {
			out = append(out, c)
		}
	}
	return &runtimeapi.ListContainersResponse{Containers: out}, nil
}

func (r *runtimeOf) ContainerStatus(_ context.Context, in *runtimeapi.ContainerStatusRequest, _ ...grpc.CallOption) (*runtimeapi.ContainerStatusResponse, error) {
	for _, c := range r.instances {
		if c.Id == in.ContainerId {
			return &runtimeapi.ContainerStatusResponse{Status: &runtimeapi.ContainerStatus{Id: c.Id, State: c.State, CreatedAt: c.CreatedAt, StartedAt: c.CreatedAt}}, nil
		}
	}
	return nil, status.Error(codes.NotFound, "no such container")
}

func (r *runtimeOf) StopContainer(_ context.Context, in *runtimeapi.StopContainerRequest, _ ...grpc.CallOption) (*runtimeapi.StopContainerResponse, error) {
	r.stopped = append(r.stopped, in.ContainerId)
	for _, c := range r.instances {
		if c.Id == in.ContainerId {
			c.State = runtimeapi.ContainerState_CONTAINER_EXITED
		}
	}
	return &runtimeapi.StopContainerResponse{}, nil
}

// reporting is the pod "web" whose status reports instance id of "app".
func reporting(id string, restarts int32, running, started bool) *corev1.Pod {
	cs := corev1.ContainerStatus{Name: "app", ContainerID: "containerd://" + id, RestartCount: restarts, Started: &started}
	if running {
		cs.State.Running = &corev1.ContainerStateRunning{}
	} else {
		cs.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "uid-web"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}},
		Status:     corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{cs}},
	}
}

// TestOnlyAnInstanceStartedAfterTheRequestCountsAsRecreated plays what was
// seen on the real cluster: the request is made while the pod's status
// still shows the previous instance, exited, and the kubelet has already
// started the next one, whose postStart hook still runs. That instance
// predates the request: it is the one to stop (at once with forceRecreate,
// once it has started without), isKilled is true only when Rejuv stopped
// something, and the container counts as recreated only when an instance
// created after the request runs.
func TestOnlyAnInstanceStartedAfterTheRequestCountsAsRecreated(t *testing.T) {
	at := time.Date(2026, 11, 23, 10, 0, 0, 400_000_000, time.UTC)
	requests := 0
	request := func(force bool) *v1beta1.ContainerRecreateRequest {
		requests++
		return &v1beta1.ContainerRecreateRequest{
			ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns", UID: types.UID(fmt.Sprint("uid-", requests)), CreationTimestamp: metav1.NewTime(at.Truncate(time.Second)),
				Annotations: map[string]string{v1beta1.RequestedAtAnnotation: at.Format(time.RFC3339Nano)}},
			Spec: v1beta1.ContainerRecreateRequestSpec{PodName: "web",
				Containers: []v1beta1.ContainerRecreateRequestContainer{{Name: "app", StatusContext: &v1beta1.ContainerRecreateRequestContainerContext{ContainerID: "containerd://x", RestartCount: 0}}},
				Strategy:   &v1beta1.ContainerRecreateRequestStrategy{ForceRecreate: force}},
		}
	}
	// The cache holds the pod, not being deleted, whichever instance its
	// status reports.
	e := &Executor{Store: &staleStore{pod: reporting("x", 0, true, true)}, Clock: clocktesting.NewFakePassiveClock(at.Add(time.Minute))}
	step := func(rt *runtimeOf, crr *v1beta1.ContainerRecreateRequest, pod *corev1.Pod, state *v1beta1.ContainerRecreateRequestContainerRecreateState) bool {
		t.Helper()
		p := e.newPass(crr, pod, &cri.Client{Runtime: rt})
		p.st.ContainerRecreateStates = []v1beta1.ContainerRecreateRequestContainerRecreateState{*state}
		defer func() { *state = p.st.ContainerRecreateStates[0] }()
		m, err := p.advance(context.Background(), 0)
		target := m.stop
		if err != nil || target == "" {
			if err != nil {
				t.Fatal(err)
			}
			return false
		}
		stopped, err := p.stopInstance(context.Background(), 0, target, nil)
		if err != nil {
			t.Fatal(err)
		}
		return stopped
	}
	// The previous instance x exited before the request; y was created
	// (in the same second as the request, before it) and is in its postStart.
	crashedJustBefore := func() *runtimeOf {
		rt := &runtimeOf{}
		rt.add("x", 0, at.Add(-time.Minute), runtimeapi.ContainerState_CONTAINER_EXITED)
		rt.add("y", 1, at.Add(-300*time.Millisecond), runtimeapi.ContainerState_CONTAINER_RUNNING)
		return rt
	}

	t.Run("forceRecreate stops the instance still starting", func(t *testing.T) {
		rt, crr := crashedJustBefore(), request(true)
		state := &v1beta1.ContainerRecreateRequestContainerRecreateState{Name: "app"}
		if !step(rt, crr, reporting("x", 0, false, false), state) || len(rt.stopped) != 1 || rt.stopped[0] != "y" || !state.IsKilled {
			t.Fatalf("stopped %v, isKilled %v (%q); want the starting instance y stopped", rt.stopped, state.IsKilled, state.Message)
		}
		// The status reports y at last: it started before the request.
		step(rt, crr, reporting("y", 1, true, true), state)
		if state.Phase == v1beta1.PhaseSucceeded || len(rt.stopped) != 1 {
			t.Fatalf("with y reported: phase %s, stopped %v; want still waiting, nothing stopped again", state.Phase, rt.stopped)
		}
		rt.add("z", 2, at.Add(2*time.Second), runtimeapi.ContainerState_CONTAINER_RUNNING)
		step(rt, crr, reporting("z", 2, true, true), state)
		if state.Phase != v1beta1.PhaseSucceeded || len(rt.stopped) != 1 {
			t.Fatalf("with z running: phase %s (%q), stopped %v; want Succeeded", state.Phase, state.Message, rt.stopped)
		}
	})

	t.Run("without forceRecreate the starting instance is stopped once started", func(t *testing.T) {
		rt, crr := crashedJustBefore(), request(false)
		state := &v1beta1.ContainerRecreateRequestContainerRecreateState{Name: "app"}
		if step(rt, crr, reporting("x", 0, false, false), state) || state.IsKilled {
			t.Fatalf("stopped %v while y is still starting; want a wait", rt.stopped)
		}
		if !step(rt, crr, reporting("y", 1, true, true), state) || len(rt.stopped) != 1 || rt.stopped[0] != "y" || !state.IsKilled {
			t.Fatalf("y started: phase %s, stopped %v, isKilled %v (%q); want y stopped", state.Phase, rt.stopped, state.IsKilled, state.Message)
		}
	})

	t.Run("an instance created after the request counts without a stop", func(t *testing.T) {
		rt, crr := &runtimeOf{}, request(false)
		rt.add("x", 0, at.Add(-time.Minute), runtimeapi.ContainerState_CONTAINER_EXITED)
		rt.add("y", 1, at.Add(300*time.Millisecond), runtimeapi.ContainerState_CONTAINER_RUNNING)
		state := &v1beta1.ContainerRecreateRequestContainerRecreateState{Name: "app"}
		step(rt, crr, reporting("y", 1, true, true), state)
		if state.Phase != v1beta1.PhaseSucceeded || state.IsKilled || len(rt.stopped) != 0 {
			t.Fatalf("phase %s, isKilled %v, stopped %v; want Succeeded without a kill", state.Phase, state.IsKilled, rt.stopped)
		}
	})

	t.Run("an instance that exited by itself is not reported killed", func(t *testing.T) {
		rt, crr := &runtimeOf{}, request(true)
		rt.add("x", 0, at.Add(-time.Minute), runtimeapi.ContainerState_CONTAINER_EXITED)
		state := &v1beta1.ContainerRecreateRequestContainerRecreateState{Name: "app"}
		if step(rt, crr, reporting("x", 0, false, false), state) || state.IsKilled || len(rt.stopped) != 0 {
			t.Fatalf("isKilled %v, stopped %v; nothing was stopped", state.IsKilled, rt.stopped)
		}
	})

	t.Run("after the stop, a running successor counts whatever the clocks say", func(t *testing.T) {
		rt, crr := &runtimeOf{}, request(false)
		rt.add("x", 0, at.Add(-time.Minute), runtimeapi.ContainerState_CONTAINER_RUNNING)
		state := &v1beta1.ContainerRecreateRequestContainerRecreateState{Name: "app"}
		if !step(rt, crr, reporting("x", 0, true, true), state) {
			t.Fatalf("x not stopped: %q", state.Message)
		}
		// This node's clock is behind the manager's: y looks older than the request.
		rt.add("y", 1, at.Add(-time.Second), runtimeapi.ContainerState_CONTAINER_RUNNING)
		step(rt, crr, reporting("y", 1, true, true), state)
		if state.Phase != v1beta1.PhaseSucceeded || len(rt.stopped) != 1 {
			t.Fatalf("phase %s (%q), stopped %v; want Succeeded", state.Phase, state.Message, rt.stopped)
		}
	})
}
