package executor

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/daemon/cri"
)

// staleStore is the daemon's cache holding one request and one pod, both
// as they were when the test set them.
type staleStore struct {
	crr *v1beta1.ContainerRecreateRequest
	pod *corev1.Pod
}

func (s *staleStore) Request(_, _ string) (*v1beta1.ContainerRecreateRequest, bool) {
	return s.crr, true
}
func (s *staleStore) Pod(_, _ string) (*corev1.Pod, bool) { return s.pod, true }
func (s *staleStore) RequestsOfPod(_, _ string) []*v1beta1.ContainerRecreateRequest {
	return []*v1beta1.ContainerRecreateRequest{s.crr}
}

// conflicting lets its first after writes through, then refuses refuse of
// them as conflicts, as the API server does when the request changed
// since the cache's copy, and keeps the rest.
type conflicting struct {
	after, refuse int
	written       []v1beta1.ContainerRecreateRequestStatus
}

func (c *conflicting) UpdateRequestStatus(_ context.Context, crr *v1beta1.ContainerRecreateRequest) (*v1beta1.ContainerRecreateRequest, error) {
	if len(c.written) >= c.after && c.refuse > 0 {
		c.refuse--
		return nil, apierrors.NewConflict(schema.GroupResource{Group: "apps.kruise.io", Resource: "containerrecreaterequests"}, crr.Name, nil)
	}
	c.written = append(c.written, *crr.Status.DeepCopy())
	return crr.DeepCopy(), nil
}

type runtimeSource struct{ rt *cri.Client }

func (r runtimeSource) Client() *cri.Client { return r.rt }

// TestAStopWhoseRecordIsRefusedIsNotRepeated: the daemon records the stop
// it is about to make, stops the container, and its write of the stop is
// refused (the request changed meanwhile). The next pass, from the same stale copy, must still know the
// container was stopped: it reports isKilled, and it does not stop the
// successor, even when this node's clock makes the successor look older
// than the request.
func TestAStopWhoseRecordIsRefusedIsNotRepeated(t *testing.T) {
	at := time.Date(2026, 11, 23, 10, 0, 0, 400_000_000, time.UTC)
	writes := &conflicting{after: 1, refuse: 1}
	e, crr, rt := oneRunningContainer(at, writes, at.Add(time.Minute))
	key := types.NamespacedName{Namespace: "ns", Name: "r"}

	if _, err := e.Reconcile(context.Background(), key); !apierrors.IsConflict(err) {
		t.Fatalf("first pass: %v; want the conflict of the refused write", err)
	}
	if len(rt.stopped) != 1 || rt.stopped[0] != "x" {
		t.Fatalf("stopped %v; want x stopped by the first pass", rt.stopped)
	}
	// The kubelet starts y; this node's clock is behind the manager's, so
	// y's creation time is before the request's.
	rt.add("y", 1, at.Add(-time.Second), runtimeapi.ContainerState_CONTAINER_RUNNING)
	e.Store.(*staleStore).pod = reporting("y", 1, true, true)
	e.Store.(*staleStore).pod.Spec.NodeName = "node"
	if _, err := e.Reconcile(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	if len(rt.stopped) != 1 {
		t.Errorf("stopped %v; the successor y was stopped too", rt.stopped)
	}
	if len(writes.written) == 0 {
		t.Fatal("the second pass wrote nothing")
	}
	got := writes.written[len(writes.written)-1]
	if s := got.ContainerRecreateStates[0]; !s.IsKilled || s.Phase != v1beta1.PhaseSucceeded || got.Phase != v1beta1.PhaseCompleted {
		t.Errorf("status %s, container %+v; want Completed with app Succeeded and isKilled", got.Phase, s)
	}
	// Once the cache has the completed request, the daemon forgets the stop.
	e.Store.(*staleStore).crr = &v1beta1.ContainerRecreateRequest{ObjectMeta: crr.ObjectMeta, Spec: crr.Spec, Status: got}
	if _, err := e.Reconcile(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.stopped(crr, "app"); ok {
		t.Error("the stop of a completed request is still remembered")
	}
}

// TestARequestEndedBeforeItsFirstStopStopsNothing: the manager ends a
// request no daemon has begun (Rejuv paused) just as the daemon takes it
// up: the daemon's record of the stop it is about to make is refused
// (the request changed since its copy), and nothing is stopped; the
// request's status, the manager's, says so truthfully.
func TestARequestEndedBeforeItsFirstStopStopsNothing(t *testing.T) {
	at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	e, _, rt := oneRunningContainer(at, &conflicting{refuse: 1}, at.Add(time.Second))
	if _, err := e.Reconcile(context.Background(), types.NamespacedName{Namespace: "ns", Name: "r"}); !apierrors.IsConflict(err) {
		t.Fatalf("pass: %v; want the conflict of the refused record", err)
	}
	if len(rt.stopped) != 0 {
		t.Errorf("stopped %v; want nothing stopped once the record of the stop was refused", rt.stopped)
	}
}

// oneRunningContainer is an executor, on node "node", whose stale cache
// holds request r (made at at) to recreate container app of pod web, whose
// instance x runs; its status writes go to writes, its clock reads now.
func oneRunningContainer(at time.Time, writes *conflicting, now time.Time) (*Executor, *v1beta1.ContainerRecreateRequest, *runtimeOf) {
	crr := &v1beta1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns", UID: "uid-r", CreationTimestamp: metav1.NewTime(at.Truncate(time.Second)),
			Annotations: map[string]string{v1beta1.RequestedAtAnnotation: at.Format(time.RFC3339Nano)},
			Labels:      map[string]string{v1beta1.NodeNameLabel: "node", v1beta1.PodUIDLabel: "uid-web"}},
		Spec: v1beta1.ContainerRecreateRequestSpec{PodName: "web",
			Containers: []v1beta1.ContainerRecreateRequestContainer{{Name: "app", StatusContext: &v1beta1.ContainerRecreateRequestContainerContext{ContainerID: "containerd://x"}}}},
	}
	pod := reporting("x", 0, true, true)
	pod.Spec.NodeName = "node"
	rt := &runtimeOf{}
	rt.add("x", 0, at.Add(-time.Minute), runtimeapi.ContainerState_CONTAINER_RUNNING)
	e := &Executor{Store: &staleStore{crr: crr, pod: pod}, Status: writes, Runtime: runtimeSource{&cri.Client{Runtime: rt}},
		NodeName: "node", Clock: clocktesting.NewFakePassiveClock(now)}
	return e, crr, rt
}
