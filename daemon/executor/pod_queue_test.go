package executor

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

func TestHeadIsOldestOpenRequest(t *testing.T) {
	at := func(sec int, name string, phase v1beta1.ContainerRecreateRequestPhase) *v1beta1.ContainerRecreateRequest {
		return &v1beta1.ContainerRecreateRequest{
			ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(time.Unix(int64(sec), 0))},
			Status:     v1beta1.ContainerRecreateRequestStatus{Phase: phase},
		}
	}
	reqs := []*v1beta1.ContainerRecreateRequest{
		at(3, "c", ""), at(1, "done", v1beta1.PhaseCompleted), at(2, "b2", v1beta1.PhasePending), at(2, "b1", ""),
	}
	if h := head(reqs); h == nil || h.Name != "b1" {
		t.Fatalf("head = %v, want b1 (oldest open, name breaks the tie)", h)
	}
	if h := head([]*v1beta1.ContainerRecreateRequest{at(1, "done", v1beta1.PhaseCompleted)}); h != nil {
		t.Fatalf("head of completed requests = %s, want none", h.Name)
	}
}

// queueStore is the daemon's cache with one pod and its requests; status
// writes go back into it, counted per request.
type queueStore struct {
	pod    *corev1.Pod
	reqs   map[string]*v1beta1.ContainerRecreateRequest
	writes map[string]int
}

func (s *queueStore) Request(_, name string) (*v1beta1.ContainerRecreateRequest, bool) {
	r, ok := s.reqs[name]
	return r, ok
}

func (s *queueStore) Pod(_, _ string) (*corev1.Pod, bool) { return s.pod, true }

func (s *queueStore) RequestsOfPod(_, _ string) []*v1beta1.ContainerRecreateRequest {
	out := make([]*v1beta1.ContainerRecreateRequest, 0, len(s.reqs))
	for _, r := range s.reqs {
		out = append(out, r)
	}
	return out
}

func (s *queueStore) UpdateRequestStatus(_ context.Context, crr *v1beta1.ContainerRecreateRequest) (*v1beta1.ContainerRecreateRequest, error) {
	if crr.Status.Message == queuedMessage {
		s.writes[crr.Name]++
	}
	s.reqs[crr.Name] = crr.DeepCopy()
	return crr, nil
}

// TestAHeadChangeDoesNotRewriteTheQueue: requests queued on one pod each
// get their Pending status once. A pass over the pod runs its head and
// writes the status of every request queued behind it that changed; when
// the head completes, the pod is passed over again (once for each event of
// its requests); a queued request's status must not change with the head,
// or the n requests of a pod cost n²/2 writes. The head itself only waits
// here (no container runtime found yet), and only the queue's writes are
// counted.
func TestAHeadChangeDoesNotRewriteTheQueue(t *testing.T) {
	const n = 10
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "pod-1"}, Spec: corev1.PodSpec{NodeName: "node-a"}}
	s := &queueStore{pod: pod, reqs: map[string]*v1beta1.ContainerRecreateRequest{}, writes: map[string]int{}}
	var order []string
	for i := range n {
		name := fmt.Sprintf("q%02d", i)
		order = append(order, name)
		s.reqs[name] = &v1beta1.ContainerRecreateRequest{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID(name), CreationTimestamp: metav1.NewTime(time.Unix(int64(1000+i), 0)),
				Labels: map[string]string{v1beta1.NodeNameLabel: "node-a", v1beta1.PodUIDLabel: "pod-1"}},
			Spec: v1beta1.ContainerRecreateRequestSpec{PodName: "web", Containers: []v1beta1.ContainerRecreateRequestContainer{{Name: "app"}}},
		}
	}
	e := &Executor{Store: s, Status: s, NodeName: "node-a", Runtime: runtimeSource{}}
	for h, running := range order {
		// The pod is passed over once for each request behind the head,
		// as each of their events queues it.
		for _, name := range order[h+1:] {
			if _, err := e.Reconcile(context.Background(), types.NamespacedName{Namespace: "shop", Name: name}); err != nil {
				t.Fatal(err)
			}
			if got := s.reqs[name].Status; got.Phase != v1beta1.PhasePending || got.Message != queuedMessage {
				t.Fatalf("%s behind %s: status %+v, want Pending, queued", name, running, got)
			}
			if got := s.reqs[running].Status; got.Message == queuedMessage {
				t.Fatalf("the head %s says it is queued: %+v", running, got)
			}
		}
		done := s.reqs[running].DeepCopy()
		done.Status.Phase = v1beta1.PhaseCompleted
		s.reqs[running] = done
	}
	total := 0
	for _, name := range order {
		total += s.writes[name]
	}
	t.Logf("%d requests queued on one pod, completed in turn: %d status writes for their queueing (%v)", n, total, s.writes)
	if total > n-1 {
		t.Errorf("%d requests queued on one pod took %d status writes while queued, want at most %d (one each)", n, total, n-1)
	}
}
