package executor

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/daemon/cri"
)

// livePod is the API server's copy of one pod.
type livePod struct {
	pod   *corev1.Pod
	reads int
}

func (l *livePod) GetPod(_ context.Context, _, _ string) (*corev1.Pod, error) {
	l.reads++
	return l.pod.DeepCopy(), nil
}

// gatedPod is the pod web with the KruisePodReady gate, running instance
// x, Ready or not since the time given.
func gatedPod(ready bool, since time.Time) *corev1.Pod {
	pod := reporting("x", 0, true, true)
	pod.Spec.NodeName = "node"
	pod.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: v1beta1.PodReadyCondition}}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status, LastTransitionTime: metav1.NewTime(since)}}
	return pod
}

// TestALaggingCacheDoesNotCutTheUnreadyGraceShort: the manager has made
// the pod unready (PreRecreateGrace), but the daemon's cache lags (its
// watch backing off after the API server restarted) and shows the pod
// not ready since an hour ago, from before it last became Ready. Trusting
// it, the daemon would stop the container at once, while the pod is
// still Ready and in its Services: its clients' connections refused, as
// the soak saw (seed 9) about 25 s after the API server restarted. The
// daemon reads the pod from the API server before the first stop, and
// waits until the pod as it is has been unready for the grace.
func TestALaggingCacheDoesNotCutTheUnreadyGraceShort(t *testing.T) {
	at := time.Date(2026, 11, 30, 10, 0, 0, 400_000_000, time.UTC)
	grace := int64(5)
	crr := &v1beta1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns", UID: "uid-r", CreationTimestamp: metav1.NewTime(at.Truncate(time.Second)),
			Annotations: map[string]string{v1beta1.RequestedAtAnnotation: at.Format(time.RFC3339Nano)},
			Labels:      map[string]string{v1beta1.NodeNameLabel: "node", v1beta1.PodUIDLabel: "uid-web"}},
		Spec: v1beta1.ContainerRecreateRequestSpec{PodName: "web",
			Containers: []v1beta1.ContainerRecreateRequestContainer{{Name: "app", StatusContext: &v1beta1.ContainerRecreateRequestContainerContext{ContainerID: "containerd://x"}}},
			Strategy:   &v1beta1.ContainerRecreateRequestStrategy{UnreadyGracePeriodSeconds: &grace}},
		Status: v1beta1.ContainerRecreateRequestStatus{Conditions: []metav1.Condition{{Type: v1beta1.ConditionPreRecreateGrace, Status: metav1.ConditionTrue,
			Reason: "PodMadeUnready", LastTransitionTime: metav1.NewTime(at)}}},
	}
	rt := &runtimeOf{}
	rt.add("x", 0, at.Add(-2*time.Hour), runtimeapi.ContainerState_CONTAINER_RUNNING)
	clock := clocktesting.NewFakeClock(at.Add(2 * time.Second))
	live := &livePod{pod: gatedPod(true, at.Add(-30*time.Minute))}
	e := &Executor{Store: &staleStore{crr: crr, pod: gatedPod(false, at.Add(-time.Hour))}, Live: live, Status: &conflicting{},
		Runtime: runtimeSource{&cri.Client{Runtime: rt}}, NodeName: "node", Clock: clock}
	key := types.NamespacedName{Namespace: "ns", Name: "r"}
	pass := func() Result {
		t.Helper()
		res, err := e.Reconcile(context.Background(), key)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	// Premise: the cache alone says the grace is over.
	if wait, why := graceLeft(crr, e.Store.(*staleStore).pod, clock.Now()); why != "" || wait != 0 {
		t.Fatalf("premise: the cache says wait %s (%q); want the grace over", wait, why)
	}
	pass()
	if len(rt.stopped) != 0 || live.reads == 0 {
		t.Fatalf("stopped %v with the pod Ready in the API server (read %d times)", rt.stopped, live.reads)
	}

	// The kubelet reports the pod not ready: the grace runs from then.
	unready := at.Add(2 * time.Second)
	live.pod = gatedPod(false, unready)
	clock.SetTime(unready.Add(1500 * time.Millisecond))
	res := pass()
	if len(rt.stopped) != 0 {
		t.Fatalf("stopped %v 1.5 s into the grace of %ds", rt.stopped, grace)
	}
	if res.RequeueAfter <= 0 || res.RequeueAfter > time.Duration(grace+1)*time.Second {
		t.Errorf("looks again after %s; want within the grace left", res.RequeueAfter)
	}
	clock.SetTime(unready.Add(time.Duration(grace+1) * time.Second))
	pass()
	if len(rt.stopped) != 1 || rt.stopped[0] != "x" {
		t.Fatalf("stopped %v once the pod as it is has been unready for the grace; want x", rt.stopped)
	}
	if w := e.Status.(*conflicting).written; len(w) == 0 || !strings.Contains(w[0].Message, "not ready") {
		t.Errorf("first status %+v; want it to say the daemon waits for the pod to be reported not ready", w)
	}
}
