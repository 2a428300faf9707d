package executor

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/daemon/cri"
)

// deletingStore is the daemon's cache with one request and its pod, which
// a test deletes (gives a deletionTimestamp) at a moment of its choosing:
// from the deleteAt-th read of the pod on, or when markDeleting is called.
type deletingStore struct {
	mu       sync.Mutex
	crr      *v1beta1.ContainerRecreateRequest
	pod      *corev1.Pod
	reads    int
	deleteAt int
}

func (s *deletingStore) Request(_, _ string) (*v1beta1.ContainerRecreateRequest, bool) {
	return s.crr, true
}

func (s *deletingStore) Pod(_, _ string) (*corev1.Pod, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	if s.deleteAt > 0 && s.reads >= s.deleteAt && s.pod.DeletionTimestamp == nil {
		s.deleteLocked()
	}
	return s.pod, true
}

func (s *deletingStore) RequestsOfPod(_, _ string) []*v1beta1.ContainerRecreateRequest {
	return []*v1beta1.ContainerRecreateRequest{s.crr}
}

// markDeleting is the informer's update for `kubectl delete pod`: the cache
// holds a new copy with a deletionTimestamp.
func (s *deletingStore) markDeleting() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deleteLocked()
}

func (s *deletingStore) deleteLocked() {
	p := s.pod.DeepCopy()
	now := metav1.Now()
	p.DeletionTimestamp = &now
	s.pod = p
}

// hookRuntime is slowStops whose exec preStop hook counts its runs and
// calls during while it runs.
type hookRuntime struct {
	*slowStops
	hooks  int
	during func()
}

func (r *hookRuntime) ExecSync(context.Context, *runtimeapi.ExecSyncRequest, ...grpc.CallOption) (*runtimeapi.ExecSyncResponse, error) {
	r.mu.Lock()
	r.hooks++
	r.mu.Unlock()
	if r.during != nil {
		r.during()
	}
	return &runtimeapi.ExecSyncResponse{}, nil
}

// reasons keeps the reasons of the events recorded.
type reasons struct {
	mu   sync.Mutex
	seen []string
}

func (r *reasons) Eventf(_, _ runtime.Object, _, reason, _, _ string, _ ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, reason)
}

// TestAPodBeingDeletedIsNeitherHookedNorStopped: once the pod has a
// deletionTimestamp the kubelet runs its preStop hooks and stops its
// containers itself; the daemon runs no hook and stops nothing, whether
// the deletion came before the pass, between the pass's start and the
// hook, or while Rejuv's own hook ran. The request is left to the manager,
// which ends it.
func TestAPodBeingDeletedIsNeitherHookedNorStopped(t *testing.T) {
	cases := []struct {
		name      string
		deleteAt  int  // the read of the pod from which it is being deleted
		duringRun bool // deleted while Rejuv's hook runs
		hooks     int
	}{
		{name: "before the pass", deleteAt: 1},
		{name: "right before the hook", deleteAt: 2},
		{name: "while the hook runs", duringRun: true, hooks: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			crr, pod := twoRunning(v1beta1.ContainerRecreateRequestStrategy{})
			crr.Spec.Containers = crr.Spec.Containers[:1]
			crr.Spec.Containers[0].PreStop = &v1beta1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"drain"}}}
			store := &deletingStore{crr: crr, pod: pod, deleteAt: tc.deleteAt}
			rt := &hookRuntime{slowStops: newSlowStops()}
			if tc.duringRun {
				rt.during = store.markDeleting
			}
			writes := &written{}
			events := &reasons{}
			e := &Executor{Store: store, Status: writes, Runtime: runtimeSource{&cri.Client{Runtime: rt}}, NodeName: "node",
				Clock: clocktesting.NewFakePassiveClock(crr.CreationTimestamp.Add(time.Second)), Recorder: events}
			if _, err := e.Reconcile(context.Background(), types.NamespacedName{Namespace: "ns", Name: "r"}); err != nil {
				t.Fatalf("reconcile: %v", err)
			}
			if rt.hooks != tc.hooks || len(rt.stopped) != 0 {
				t.Errorf("the daemon ran the preStop hook %d times and stopped %v; want %d runs (its own, begun before the deletion) and no stop", rt.hooks, rt.stopped, tc.hooks)
			}
			if slices.Contains(events.seen, "StoppingContainer") {
				t.Errorf("events %v: a stop of Rejuv's was announced", events.seen)
			}
			if len(writes.statuses) == 0 {
				return
			}
			last := writes.statuses[len(writes.statuses)-1]
			if s := last.ContainerRecreateStates[0]; s.IsKilled || s.Phase == v1beta1.PhaseSucceeded || s.Message != deletingMessage || last.Phase == v1beta1.PhaseCompleted {
				t.Errorf("status %s, app %+v; want app not stopped, saying %q, and the request left to the manager", last.Phase, s, deletingMessage)
			}
		})
	}
}
