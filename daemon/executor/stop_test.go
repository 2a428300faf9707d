package executor

import (
	"context"
	"math"
	"testing"
	"time"

	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/daemon/cri"
)

// stopRecorder is a runtime whose container runs, and which records how it
// was asked to stop it.
type stopRecorder struct {
	runtimeapi.RuntimeServiceClient
	timeout     int64
	deadline    time.Time
	hasDeadline bool
}

func (r *stopRecorder) ContainerStatus(context.Context, *runtimeapi.ContainerStatusRequest, ...grpc.CallOption) (*runtimeapi.ContainerStatusResponse, error) {
	return &runtimeapi.ContainerStatusResponse{Status: &runtimeapi.ContainerStatus{State: runtimeapi.ContainerState_CONTAINER_RUNNING}}, nil
}

func (r *stopRecorder) StopContainer(ctx context.Context, in *runtimeapi.StopContainerRequest, _ ...grpc.CallOption) (*runtimeapi.StopContainerResponse, error) {
	r.timeout = in.Timeout
	r.deadline, r.hasDeadline = ctx.Deadline()
	return &runtimeapi.StopContainerResponse{}, nil
}

// TestStopIsBoundedByTheRequestsDeadline: a container is stopped with no
// more grace than is left until the request's deadline, and the runtime's
// call is bounded too (the grace, then the runtime's kill), so a request
// never stops a container after it ended.
func TestStopIsBoundedByTheRequestsDeadline(t *testing.T) {
	grace := int64(30)
	crr := &v1beta1.ContainerRecreateRequest{Spec: v1beta1.ContainerRecreateRequestSpec{
		PodName:    "web",
		Containers: []v1beta1.ContainerRecreateRequestContainer{{Name: "app", StatusContext: &v1beta1.ContainerRecreateRequestContainerContext{ContainerID: "containerd://abc"}}},
		Strategy:   &v1beta1.ContainerRecreateRequestStrategy{TerminationGracePeriodSeconds: &grace},
	}}
	rt := &stopRecorder{}
	deadline := time.Now().Add(5 * time.Second)
	e := &Executor{Store: &staleStore{pod: &corev1.Pod{}}}
	p := e.newPass(crr, &corev1.Pod{}, &cri.Client{Runtime: rt})
	p.deadline = deadline
	if _, err := p.stop(context.Background(), 0, "abc", nil); err != nil {
		t.Fatal(err)
	}
	if rt.timeout > 5 {
		t.Errorf("stopped with a grace of %ds, 5s before the request's deadline", rt.timeout)
	}
	if !rt.hasDeadline || rt.deadline.After(deadline.Add(stopKillMargin)) {
		t.Errorf("the runtime's stop call has deadline %v (set %v), want by the request's deadline and the kill margin", rt.deadline, rt.hasDeadline)
	}
	// Without a deadline, the whole grace; the runtime's call is still
	// bounded, by the grace and the kill margin.
	rt = &stopRecorder{}
	called := time.Now()
	if _, err := e.newPass(crr, &corev1.Pod{}, &cri.Client{Runtime: rt}).stop(context.Background(), 0, "abc", nil); err != nil || rt.timeout != 30 {
		t.Errorf("without a deadline: %v, grace %ds, want 30s", err, rt.timeout)
	}
	if !rt.hasDeadline || rt.deadline.After(called.Add(30*time.Second+stopKillMargin+time.Second)) {
		t.Errorf("without a deadline, the runtime's stop call has deadline %v (set %v), want within the grace and the kill margin", rt.deadline, rt.hasDeadline)
	}
}

// TestLongestGraceIsNotNoGrace: a grace period too long for a
// time.Duration (a request admitted before its bound, or where no webhook
// checks it) is the longest grace, not none: the runtime is asked for a
// timeout it can turn into nanoseconds, as containerd does, without
// wrapping to a kill at once.
func TestLongestGraceIsNotNoGrace(t *testing.T) {
	for _, grace := range []int64{9_300_000_000, math.MaxInt64} {
		crr := &v1beta1.ContainerRecreateRequest{Spec: v1beta1.ContainerRecreateRequestSpec{
			PodName:    "web",
			Containers: []v1beta1.ContainerRecreateRequestContainer{{Name: "app", StatusContext: &v1beta1.ContainerRecreateRequestContainerContext{ContainerID: "containerd://abc"}}},
			Strategy:   &v1beta1.ContainerRecreateRequestStrategy{TerminationGracePeriodSeconds: &grace},
		}}
		rt := &stopRecorder{}
		e := &Executor{Store: &staleStore{pod: &corev1.Pod{}}}
		if _, err := e.newPass(crr, &corev1.Pod{}, &cri.Client{Runtime: rt}).stop(context.Background(), 0, "abc", nil); err != nil {
			t.Fatal(err)
		}
		if rt.timeout < v1beta1.MaxGracePeriodSeconds || rt.timeout > math.MaxInt64/int64(time.Second) {
			t.Errorf("grace %ds: stopped with a timeout of %ds, want at least %ds and no more than fits in nanoseconds", grace, rt.timeout, v1beta1.MaxGracePeriodSeconds)
		}
	}
}
