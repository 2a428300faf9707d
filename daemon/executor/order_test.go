package executor

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/daemon/cri"
)

// slowStops is a runtime with the containers "app" and "side" of the pod
// "web", running, whose stops each take a while; it records how many stops
// were in flight at once.
type slowStops struct {
	runtimeapi.RuntimeServiceClient
	mu       sync.Mutex
	state    map[string]runtimeapi.ContainerState
	inFlight int
	most     int
	stopped  []string
}

func newSlowStops() *slowStops {
	return &slowStops{state: map[string]runtimeapi.ContainerState{
		"app": runtimeapi.ContainerState_CONTAINER_RUNNING, "side": runtimeapi.ContainerState_CONTAINER_RUNNING}}
}

func (r *slowStops) ListContainers(_ context.Context, in *runtimeapi.ListContainersRequest, _ ...grpc.CallOption) (*runtimeapi.ListContainersResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	name := in.GetFilter().GetLabelSelector()[kubeletContainerNameLabel]
	return &runtimeapi.ListContainersResponse{Containers: []*runtimeapi.Container{{
		Id: name, Metadata: &runtimeapi.ContainerMetadata{Name: name}, CreatedAt: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC).UnixNano(), State: r.state[name],
		Labels: map[string]string{kubeletPodUIDLabel: "uid-web", kubeletContainerNameLabel: name},
	}}}, nil
}

func (r *slowStops) ContainerStatus(_ context.Context, in *runtimeapi.ContainerStatusRequest, _ ...grpc.CallOption) (*runtimeapi.ContainerStatusResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return &runtimeapi.ContainerStatusResponse{Status: &runtimeapi.ContainerStatus{Id: in.ContainerId, State: r.state[in.ContainerId]}}, nil
}

func (r *slowStops) StopContainer(_ context.Context, in *runtimeapi.StopContainerRequest, _ ...grpc.CallOption) (*runtimeapi.StopContainerResponse, error) {
	r.mu.Lock()
	r.inFlight++
	r.most = max(r.most, r.inFlight)
	r.mu.Unlock()
	time.Sleep(200 * time.Millisecond)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inFlight--
	r.state[in.ContainerId] = runtimeapi.ContainerState_CONTAINER_EXITED
	r.stopped = append(r.stopped, in.ContainerId)
	return &runtimeapi.StopContainerResponse{}, nil
}

// written keeps every status written.
type written struct {
	statuses []v1beta1.ContainerRecreateRequestStatus
}

func (w *written) UpdateRequestStatus(_ context.Context, crr *v1beta1.ContainerRecreateRequest) (*v1beta1.ContainerRecreateRequest, error) {
	w.statuses = append(w.statuses, *crr.Status.DeepCopy())
	return crr.DeepCopy(), nil
}

// twoRunning is the request to recreate both containers of the pod "web",
// made after they started, and that pod with both running.
func twoRunning(strategy v1beta1.ContainerRecreateRequestStrategy) (*v1beta1.ContainerRecreateRequest, *corev1.Pod) {
	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	crr := &v1beta1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns", UID: "uid-r", CreationTimestamp: metav1.NewTime(at),
			Annotations: map[string]string{v1beta1.RequestedAtAnnotation: at.Format(time.RFC3339Nano)},
			Labels:      map[string]string{v1beta1.NodeNameLabel: "node", v1beta1.PodUIDLabel: "uid-web"}},
		Spec: v1beta1.ContainerRecreateRequestSpec{PodName: "web", Strategy: &strategy},
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "uid-web"}, Spec: corev1.PodSpec{NodeName: "node"}}
	started := true
	for _, name := range []string{"app", "side"} {
		crr.Spec.Containers = append(crr.Spec.Containers, v1beta1.ContainerRecreateRequestContainer{Name: name,
			StatusContext: &v1beta1.ContainerRecreateRequestContainerContext{ContainerID: "containerd://" + name}})
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: name})
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{Name: name, ContainerID: "containerd://" + name,
			Started: &started, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}})
	}
	return crr, pod
}

// onePass runs one pass of the executor over the request, a second after
// it was made, with both containers running.
func onePass(crr *v1beta1.ContainerRecreateRequest, pod *corev1.Pod) (*slowStops, *written, error) {
	rt := newSlowStops()
	writes := &written{}
	e := &Executor{Store: &staleStore{crr: crr, pod: pod}, Status: writes, Runtime: runtimeSource{&cri.Client{Runtime: rt}},
		NodeName: "node", Clock: clocktesting.NewFakePassiveClock(crr.CreationTimestamp.Add(time.Second))}
	_, err := e.Reconcile(context.Background(), types.NamespacedName{Namespace: "ns", Name: "r"})
	return rt, writes, err
}

// TestContainersAreStoppedOneAfterAnother: as OpenKruise documents its
// request, the containers are stopped one after another in the list's
// order, never two stops at once, and each stop is recorded as soon as it
// returns; with orderedRecreate one pass stops only the first container,
// the second waiting for its new instance.
func TestContainersAreStoppedOneAfterAnother(t *testing.T) {
	for _, ordered := range []bool{false, true} {
		crr, pod := twoRunning(v1beta1.ContainerRecreateRequestStrategy{OrderedRecreate: ordered})
		rt, writes, err := onePass(crr, pod)
		if err != nil {
			t.Fatalf("ordered %v: %v", ordered, err)
		}
		want := []string{"app", "side"}
		if ordered {
			want = want[:1]
		}
		if !slices.Equal(rt.stopped, want) || rt.most != 1 {
			t.Errorf("ordered %v: stopped %v, at most %d stops at once; want %v, one at a time", ordered, rt.stopped, rt.most, want)
		}
		if len(writes.statuses) == 0 {
			t.Fatalf("ordered %v: no status written", ordered)
		}
		if first := writes.statuses[0].ContainerRecreateStates; first[0].Message != stoppingMessage || first[0].IsKilled || first[1].Phase != v1beta1.PhasePending {
			t.Errorf("ordered %v: the first write records %+v; want app's stop about to start, before anything is stopped", ordered, first)
		}
		killed := slices.IndexFunc(writes.statuses, func(s v1beta1.ContainerRecreateRequestStatus) bool {
			return s.ContainerRecreateStates[0].IsKilled || s.ContainerRecreateStates[1].IsKilled
		})
		if killed < 0 {
			t.Fatalf("ordered %v: no write records a stop", ordered)
		}
		if first := writes.statuses[killed].ContainerRecreateStates; !first[0].IsKilled || first[1].IsKilled {
			t.Errorf("ordered %v: the first write of a stop records %+v; want app's stop alone, before side's", ordered, first)
		}
		if ordered {
			side := writes.statuses[len(writes.statuses)-1].ContainerRecreateStates[1]
			if side.Phase != v1beta1.PhasePending || !strings.Contains(side.Message, "waiting for container app") {
				t.Errorf("ordered: side's state %+v; want Pending, saying it waits for app", side)
			}
		}
	}
}

// TestTheNextStopWaitsForABackgroundStop: under Run a stop goes on in the
// background while the worker serves others; the next container is not
// stopped until a later pass has seen that stop return, and says what it
// waits for meanwhile.
func TestTheNextStopWaitsForABackgroundStop(t *testing.T) {
	crr, pod := twoRunning(v1beta1.ContainerRecreateRequestStrategy{})
	rt := newSlowStops()
	writes := &written{}
	requeued := 0
	e := &Executor{Store: &staleStore{crr: crr, pod: pod}, Status: writes, Runtime: runtimeSource{&cri.Client{Runtime: rt}},
		NodeName: "node", Clock: clocktesting.NewFakePassiveClock(crr.CreationTimestamp.Add(time.Second)),
		requeue: func(podKey, bool) { requeued++ }}
	if _, err := e.Reconcile(context.Background(), types.NamespacedName{Namespace: "ns", Name: "r"}); err != nil {
		t.Fatal(err)
	}
	e.background.Wait()
	if !slices.Equal(rt.stopped, []string{"app"}) || requeued != 1 {
		t.Fatalf("after the first pass: stopped %v, requeued %d times; want app alone stopped, then the request looked at again", rt.stopped, requeued)
	}
	side := writes.statuses[len(writes.statuses)-1].ContainerRecreateStates[1]
	if side.Phase != v1beta1.PhasePending || side.Message != "waiting for container app to be stopped first: containers are stopped one after another" {
		t.Errorf("side's state while app stops: %+v; want Pending, waiting for app", side)
	}
	if _, err := e.Reconcile(context.Background(), types.NamespacedName{Namespace: "ns", Name: "r"}); err != nil {
		t.Fatal(err)
	}
	e.background.Wait()
	if !slices.Equal(rt.stopped, []string{"app", "side"}) || rt.most != 1 {
		t.Errorf("after the second pass: stopped %v, at most %d at once; want app then side, one at a time", rt.stopped, rt.most)
	}
}

// TestNativeSidecarsAreStoppedLast: without orderedRecreate, native
// sidecars are stopped after the other containers, the last declared
// first, as the kubelet stops a pod's containers when it terminates,
// whatever the list's order; with orderedRecreate the list's order holds.
func TestNativeSidecarsAreStoppedLast(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "proxy", RestartPolicy: &always}, {Name: "setup"}, {Name: "logs", RestartPolicy: &always}},
		Containers:     []corev1.Container{{Name: "app"}, {Name: "worker"}},
	}}
	crr := &v1beta1.ContainerRecreateRequest{Spec: v1beta1.ContainerRecreateRequestSpec{Strategy: &v1beta1.ContainerRecreateRequestStrategy{}}}
	for _, name := range []string{"proxy", "app", "logs", "worker"} {
		crr.Spec.Containers = append(crr.Spec.Containers, v1beta1.ContainerRecreateRequestContainer{Name: name})
	}
	names := func() []string {
		var out []string
		for _, i := range stopOrder(crr, pod) {
			out = append(out, crr.Spec.Containers[i].Name)
		}
		return out
	}
	if got, want := names(), []string{"app", "worker", "logs", "proxy"}; !slices.Equal(got, want) {
		t.Errorf("stop order %v, want %v", got, want)
	}
	crr.Spec.Strategy.OrderedRecreate = true
	if got, want := names(), []string{"proxy", "app", "logs", "worker"}; !slices.Equal(got, want) {
		t.Errorf("orderedRecreate: stop order %v, want the list's %v", got, want)
	}
}

// TestARequestThatCannotFinishStopsNothing: a request with a container it
// has no statusContext for (one the webhook never saw) fails that
// container; with failurePolicy Fail it stops none of the others.
func TestARequestThatCannotFinishStopsNothing(t *testing.T) {
	for _, policy := range []v1beta1.ContainerRecreateRequestFailurePolicyType{v1beta1.FailurePolicyFail, v1beta1.FailurePolicyIgnore} {
		crr, pod := twoRunning(v1beta1.ContainerRecreateRequestStrategy{FailurePolicy: policy})
		crr.Spec.Containers[1].StatusContext = nil
		rt, writes, err := onePass(crr, pod)
		if err != nil {
			t.Fatalf("%s: %v", policy, err)
		}
		last := writes.statuses[len(writes.statuses)-1]
		switch policy {
		case v1beta1.FailurePolicyFail:
			if len(rt.stopped) != 0 || last.Phase != v1beta1.PhaseCompleted || last.Result != v1beta1.ResultFailed {
				t.Errorf("Fail: stopped %v, status %s/%s; want nothing stopped and the request Completed as Failed", rt.stopped, last.Phase, last.Result)
			}
		case v1beta1.FailurePolicyIgnore:
			if len(rt.stopped) != 1 || rt.stopped[0] != "app" {
				t.Errorf("Ignore: stopped %v; want app stopped", rt.stopped)
			}
		}
	}
}

// TestContainersTheKubeletWouldNotRestartAreNotStopped: whatever another
// webhook changed after Rejuv's, the daemon stops no container the
// kubelet would not start again (a pod with restartPolicy OnFailure, a
// container whose own restartPolicy is Never or whose rules restart every
// container on a stop's exit code, an init container, a name the pod does
// not have): the request fails before anything is stopped, saying why.
func TestContainersTheKubeletWouldNotRestartAreNotStopped(t *testing.T) {
	cases := []struct {
		name   string
		change func(*v1beta1.ContainerRecreateRequest, *corev1.Pod)
		want   string
	}{
		{"restartPolicy OnFailure", func(_ *v1beta1.ContainerRecreateRequest, pod *corev1.Pod) {
			pod.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		}, "not stopped: spec.restartPolicy is OnFailure: the kubelet would not start container app again"},
		{"its own restartPolicy Never", func(_ *v1beta1.ContainerRecreateRequest, pod *corev1.Pod) {
			pod.Spec.Containers[1].RestartPolicy = new(corev1.ContainerRestartPolicyNever)
		}, "not stopped: spec.containers[1].restartPolicy is Never: the kubelet would not start container side again once stopped"},
		{"its own rule restarting every container", func(_ *v1beta1.ContainerRecreateRequest, pod *corev1.Pod) {
			pod.Spec.Containers[1].RestartPolicy = new(corev1.ContainerRestartPolicyAlways)
			pod.Spec.Containers[1].RestartPolicyRules = []corev1.ContainerRestartRule{{Action: corev1.ContainerRestartRuleActionRestartAllContainers,
				ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: corev1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{137}}}}
		}, "not stopped: spec.containers[1].restartPolicyRules[0] restarts all the pod's containers on exit code 137"},
		{"an init container", func(crr *v1beta1.ContainerRecreateRequest, pod *corev1.Pod) {
			pod.Spec.InitContainers = []corev1.Container{{Name: "setup"}}
			crr.Spec.Containers[1].Name = "setup"
		}, "not stopped: spec.initContainers[0] is an init container that runs once"},
		{"a container the pod lacks", func(crr *v1beta1.ContainerRecreateRequest, _ *corev1.Pod) {
			crr.Spec.Containers[1].Name = "ghost"
		}, "not stopped: the pod has no container or native sidecar ghost"},
	}
	for _, tc := range cases {
		crr, pod := twoRunning(v1beta1.ContainerRecreateRequestStrategy{FailurePolicy: v1beta1.FailurePolicyFail})
		tc.change(crr, pod)
		rt, writes, err := onePass(crr, pod)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		last := writes.statuses[len(writes.statuses)-1]
		if len(rt.stopped) != 0 || last.Phase != v1beta1.PhaseCompleted || last.Result != v1beta1.ResultFailed {
			t.Errorf("%s: stopped %v, status %s/%s; want nothing stopped and the request Completed as Failed", tc.name, rt.stopped, last.Phase, last.Result)
		}
		var said bool
		for _, s := range last.ContainerRecreateStates {
			said = said || s.Phase == v1beta1.PhaseFailed && strings.HasPrefix(s.Message, tc.want)
		}
		if !said {
			t.Errorf("%s: states %+v; want one Failed saying %q", tc.name, last.ContainerRecreateStates, tc.want)
		}
	}
}

// hookedStops is slowStops with an exec preStop hook whose runs it counts,
// and stops that can fail as if the daemon died before it could stop.
type hookedStops struct {
	*slowStops
	writes *written
	// runs counts the hook's runs; recordedFirst says whether the hook's
	// start was in a status written before each run.
	runs          int
	recordedFirst bool
	failStops     bool
}

func (r *hookedStops) ExecSync(context.Context, *runtimeapi.ExecSyncRequest, ...grpc.CallOption) (*runtimeapi.ExecSyncResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runs++
	r.recordedFirst = false
	for _, st := range r.writes.statuses {
		for _, s := range st.ContainerRecreateStates {
			r.recordedFirst = r.recordedFirst || s.Name == "app" && s.PreStopStartedAt != nil
		}
	}
	return &runtimeapi.ExecSyncResponse{}, nil
}

func (r *hookedStops) StopContainer(ctx context.Context, in *runtimeapi.StopContainerRequest, opts ...grpc.CallOption) (*runtimeapi.StopContainerResponse, error) {
	if r.failStops {
		return nil, errors.New("the daemon died before the stop")
	}
	return r.slowStops.StopContainer(ctx, in, opts...)
}

// TestAPreStopCutShortIsNotRunAgain: the daemon records a preStop hook's
// start in the request's status before it runs the hook, so that a daemon
// that died while the hook ran (here: before the stop) stops the container
// after its restart without running the hook a second time.
func TestAPreStopCutShortIsNotRunAgain(t *testing.T) {
	crr, pod := twoRunning(v1beta1.ContainerRecreateRequestStrategy{FailurePolicy: v1beta1.FailurePolicyFail})
	crr.Spec.Containers = crr.Spec.Containers[:1]
	crr.Spec.Containers[0].PreStop = &v1beta1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"drain"}}}
	writes := &written{}
	rt := &hookedStops{slowStops: newSlowStops(), writes: writes, failStops: true}
	pass := func(crr *v1beta1.ContainerRecreateRequest) error {
		// A new Executor each time: what a restarted daemon knows is the
		// request's status.
		e := &Executor{Store: &staleStore{crr: crr, pod: pod}, Status: writes, Runtime: runtimeSource{&cri.Client{Runtime: rt}},
			NodeName: "node", Clock: clocktesting.NewFakePassiveClock(crr.CreationTimestamp.Add(time.Second))}
		_, err := e.Reconcile(context.Background(), types.NamespacedName{Namespace: "ns", Name: "r"})
		return err
	}
	if err := pass(crr); err == nil {
		t.Fatal("the first pass stopped the container; want its stop cut short")
	}
	if rt.runs != 1 || !rt.recordedFirst {
		t.Fatalf("first pass: the hook ran %d times, its start recorded before it ran: %v; want once, recorded first", rt.runs, rt.recordedFirst)
	}
	restarted := crr.DeepCopy()
	restarted.Status = writes.statuses[len(writes.statuses)-1]
	rt.failStops = false
	if err := pass(restarted); err != nil {
		t.Fatal(err)
	}
	if rt.runs != 1 || len(rt.stopped) != 1 || rt.stopped[0] != "app" {
		t.Errorf("after the restart: the hook ran %d times in all, stopped %v; want it run once and app stopped", rt.runs, rt.stopped)
	}
	if s := writes.statuses[len(writes.statuses)-1].ContainerRecreateStates[0]; !s.IsKilled || s.PreStopStartedAt == nil {
		t.Errorf("state after the restart %+v; want isKilled with the hook's start kept", s)
	}
}
