package executor

import (
	"context"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	fcache "k8s.io/client-go/tools/cache/testing"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/daemon/cri"
)

// stubbornRuntime runs one container "app" per pod, its ID the pod's UID.
// The containers of namespace stubborn ignore SIGTERM: their stops take
// the whole grace period (until the call's context ends, or the test
// ends). The others stop at once.
type stubbornRuntime struct {
	runtimeapi.RuntimeServiceClient
	mu       sync.Mutex
	exited   map[string]bool
	stubborn map[string]bool
	stopping chan string // each stop's container ID, when it starts
	done     chan struct{}
}

func (r *stubbornRuntime) ListContainers(_ context.Context, in *runtimeapi.ListContainersRequest, _ ...grpc.CallOption) (*runtimeapi.ListContainersResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	uid := in.GetFilter().GetLabelSelector()[kubeletPodUIDLabel]
	state := runtimeapi.ContainerState_CONTAINER_RUNNING
	if r.exited[uid] {
		state = runtimeapi.ContainerState_CONTAINER_EXITED
	}
	return &runtimeapi.ListContainersResponse{Containers: []*runtimeapi.Container{{
		Id: uid, Metadata: &runtimeapi.ContainerMetadata{Name: "app"}, CreatedAt: time.Now().Add(-time.Hour).UnixNano(), State: state,
		Labels: map[string]string{kubeletPodUIDLabel: uid, kubeletContainerNameLabel: "app"},
	}}}, nil
}

func (r *stubbornRuntime) ContainerStatus(_ context.Context, in *runtimeapi.ContainerStatusRequest, _ ...grpc.CallOption) (*runtimeapi.ContainerStatusResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	state := runtimeapi.ContainerState_CONTAINER_RUNNING
	if r.exited[in.ContainerId] {
		state = runtimeapi.ContainerState_CONTAINER_EXITED
	}
	return &runtimeapi.ContainerStatusResponse{Status: &runtimeapi.ContainerStatus{Id: in.ContainerId, State: state}}, nil
}

func (r *stubbornRuntime) StopContainer(ctx context.Context, in *runtimeapi.StopContainerRequest, _ ...grpc.CallOption) (*runtimeapi.StopContainerResponse, error) {
	r.stopping <- in.ContainerId
	r.mu.Lock()
	stubborn := r.stubborn[in.ContainerId]
	r.mu.Unlock()
	if stubborn {
		select {
		case <-ctx.Done():
		case <-r.done:
		case <-time.After(time.Duration(in.Timeout) * time.Second):
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.exited[in.ContainerId] = true
	return &runtimeapi.StopContainerResponse{}, nil
}

// nodeStore is a node's requests and pods, as the daemon's caches hold
// them; a status write updates it and tells the informer.
type nodeStore struct {
	mu       sync.Mutex
	requests map[types.NamespacedName]*v1beta1.ContainerRecreateRequest
	pods     map[types.NamespacedName]*corev1.Pod
	source   *fcache.FakeControllerSource
}

func (s *nodeStore) Request(namespace, name string) (*v1beta1.ContainerRecreateRequest, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.requests[types.NamespacedName{Namespace: namespace, Name: name}]
	return r, ok
}

func (s *nodeStore) Pod(namespace, name string) (*corev1.Pod, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pods[types.NamespacedName{Namespace: namespace, Name: name}]
	return p, ok
}

func (s *nodeStore) RequestsOfPod(namespace, uid string) []*v1beta1.ContainerRecreateRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*v1beta1.ContainerRecreateRequest
	for k, r := range s.requests {
		if k.Namespace == namespace && r.Labels[v1beta1.PodUIDLabel] == uid {
			out = append(out, r)
		}
	}
	return out
}

func (s *nodeStore) UpdateRequestStatus(_ context.Context, crr *v1beta1.ContainerRecreateRequest) (*v1beta1.ContainerRecreateRequest, error) {
	s.mu.Lock()
	stored := crr.DeepCopy()
	s.requests[types.NamespacedName{Namespace: crr.Namespace, Name: crr.Name}] = stored
	s.mu.Unlock()
	s.source.Modify(stored.DeepCopy())
	return stored.DeepCopy(), nil
}

// add stores a pod with a running container "app" and a request to
// recreate it with the given grace, and tells the informer.
func (s *nodeStore) add(namespace, name string, grace int64) {
	uid := types.UID("uid-" + namespace + "-" + name)
	started := true
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: uid}, Spec: corev1.PodSpec{NodeName: "node", Containers: []corev1.Container{{Name: "app"}}},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "app", ContainerID: "containerd://" + string(uid), Started: &started,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}}
	at := time.Now().Add(-time.Second)
	crr := &v1beta1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: "uid-r-" + uid, CreationTimestamp: metav1.NewTime(at),
			Annotations: map[string]string{v1beta1.RequestedAtAnnotation: at.Format(time.RFC3339Nano)},
			Labels:      map[string]string{v1beta1.NodeNameLabel: "node", v1beta1.PodUIDLabel: string(uid)}},
		Spec: v1beta1.ContainerRecreateRequestSpec{PodName: name, Strategy: &v1beta1.ContainerRecreateRequestStrategy{TerminationGracePeriodSeconds: &grace},
			Containers: []v1beta1.ContainerRecreateRequestContainer{{Name: "app", StatusContext: &v1beta1.ContainerRecreateRequestContainerContext{ContainerID: "containerd://" + string(uid)}}}},
	}
	s.mu.Lock()
	s.pods[types.NamespacedName{Namespace: namespace, Name: name}] = pod
	s.requests[types.NamespacedName{Namespace: namespace, Name: name}] = crr
	s.mu.Unlock()
	s.source.Add(crr.DeepCopy())
}

// runExecutor runs an executor with 4 workers over a nodeStore and a
// stubbornRuntime until the test ends.
func runExecutor(t *testing.T) (*Executor, *stubbornRuntime, *nodeStore) {
	rt := &stubbornRuntime{exited: map[string]bool{}, stubborn: map[string]bool{}, stopping: make(chan string, 16), done: make(chan struct{})}
	source := fcache.NewFakeControllerSource()
	store := &nodeStore{requests: map[types.NamespacedName]*v1beta1.ContainerRecreateRequest{}, pods: map[types.NamespacedName]*corev1.Pod{}, source: source}
	requests := cache.NewSharedIndexInformer(source, &v1beta1.ContainerRecreateRequest{}, 0, cache.Indexers{})
	pods := cache.NewSharedIndexInformer(fcache.NewFakeControllerSource(), &corev1.Pod{}, 0, cache.Indexers{})
	ctx, cancel := context.WithCancel(context.Background())
	e := &Executor{Store: store, Status: store, Runtime: runtimeSource{&cri.Client{Runtime: rt}}, NodeName: "node", Clock: clock.RealClock{}}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		close(rt.done)
		cancel()
		wg.Wait()
	})
	wg.Go(func() { requests.Run(ctx.Done()) })
	wg.Go(func() { pods.Run(ctx.Done()) })
	if !cache.WaitForCacheSync(ctx.Done(), requests.HasSynced, pods.HasSynced) {
		t.Fatal("caches did not sync")
	}
	wg.Go(func() {
		if err := e.Run(ctx, Sources{Pods: pods, Requests: requests}, 4); err != nil {
			t.Error(err)
		}
	})

	return e, rt, store
}

// TestOneNamespaceDoesNotHoldEveryWorker: a namespace's four requests on
// containers that ignore SIGTERM, with a day's grace, take the daemon's
// four workers for as long as they wait; another namespace's request,
// made then, must still start at once: its container is stopped within
// seconds, not after the first namespace's grace.
func TestOneNamespaceDoesNotHoldEveryWorker(t *testing.T) {
	_, rt, store := runExecutor(t)
	const day = 24 * 60 * 60
	for _, name := range []string{"a1", "a2", "a3", "a4"} {
		rt.mu.Lock()
		rt.stubborn["uid-stubborn-"+name] = true
		rt.mu.Unlock()
		store.add("stubborn", name, day)
	}
	// The premise: all four stops wait for their grace.
	for range 4 {
		select {
		case <-rt.stopping:
		case <-time.After(10 * time.Second):
			t.Fatal("the stubborn namespace's four stops did not start")
		}
	}
	store.add("other", "b1", 30)
	select {
	case id := <-rt.stopping:
		if id != "uid-other-b1" {
			t.Fatalf("stopped %s, want the other namespace's container", id)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the other namespace's request did not stop its container within 5s while the stubborn namespace's four stops wait for their grace")
	}
}

// TestARequestDeletedDuringItsStopIsForgotten: a stop runs on after its
// request is deleted (the container ignores SIGTERM for its grace); what
// the daemon remembers of that stop goes once it returns, not only when
// the deletion is seen, so deleted requests leave nothing behind.
func TestARequestDeletedDuringItsStopIsForgotten(t *testing.T) {
	e, rt, store := runExecutor(t)
	rt.mu.Lock()
	rt.stubborn["uid-stubborn-a1"] = true
	rt.mu.Unlock()
	store.add("stubborn", "a1", 2)
	select {
	case <-rt.stopping:
	case <-time.After(10 * time.Second):
		t.Fatal("the stop did not start")
	}
	key := types.NamespacedName{Namespace: "stubborn", Name: "a1"}
	store.mu.Lock()
	gone := store.requests[key]
	delete(store.requests, key)
	store.mu.Unlock()
	store.source.Delete(gone.DeepCopy())
	remembered := func() (n int) {
		e.stops.Range(func(any, any) bool { n++; return true })
		return n
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		rt.mu.Lock()
		exited := rt.exited["uid-stubborn-a1"]
		rt.mu.Unlock()
		if exited && remembered() == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("10s after the deleted request's 2s stop began: container exited %t, %d stops remembered; want it exited and none", exited, remembered())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
