package executor

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// TestBackOffIsToldOnce: a stopped container the kubelet holds in its
// restart back-off is said so in the state's message on every pass, and in
// one RecreateBackOff event; a container waiting for no back-off is not.
func TestBackOffIsToldOnce(t *testing.T) {
	events := &reasons{}
	e := &Executor{Recorder: events}
	crr := &v1beta1.ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "r"}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}
	state := &v1beta1.ContainerRecreateRequestContainerRecreateState{Name: "app", Phase: v1beta1.PhaseRecreating}
	p := e.newPass(crr, pod, nil)

	waiting := &corev1.ContainerStatus{Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}
	p.awaitKubelet(waiting, state)
	if state.Message != "stopped; waiting for the kubelet to start a new container" || len(events.seen) != 0 {
		t.Fatalf("no back-off: message %q, events %v", state.Message, events.seen)
	}
	backOff := &corev1.ContainerStatus{Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
		Reason: "CrashLoopBackOff", Message: "back-off 10s restarting failed container=app pod=web_shop(u1)",
	}}}
	for range 3 {
		p.awaitKubelet(backOff, state)
	}
	if !strings.HasPrefix(state.Message, "stopped; the kubelet holds the restart in its back-off: back-off 10s restarting failed container=app") {
		t.Errorf("back-off: message %q", state.Message)
	}
	// One event, on the request and on the pod.
	if got := strings.Join(events.seen, ","); got != "RecreateBackOff,RecreateBackOff" {
		t.Errorf("events %q, want RecreateBackOff on the request and the pod, once", got)
	}

	// Before the kubelet says so (it may not, until the back-off is
	// over): the stopped instance was a restart that ran 30 s.
	events.seen = nil
	state = &v1beta1.ContainerRecreateRequestContainerRecreateState{Name: "app", Phase: v1beta1.PhaseRecreating}
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	ended := &corev1.ContainerStatus{Name: "app", RestartCount: 2, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		StartedAt: metav1.NewTime(at), FinishedAt: metav1.NewTime(at.Add(30 * time.Second)),
	}}}
	p.awaitKubelet(ended, state)
	p.awaitKubelet(backOff, state)
	want := v1beta1.BackOffMessage + "the container stopped was the kubelet's restart 2 and ran 30s, less than 10m0s"
	p.awaitKubelet(ended, state)
	if !strings.HasPrefix(state.Message, want) {
		t.Errorf("foretold back-off: message %q, want it to start %q", state.Message, want)
	}
	if got := strings.Join(events.seen, ","); got != "RecreateBackOff,RecreateBackOff" {
		t.Errorf("events %q, want RecreateBackOff once as the back-off is foretold, then said", got)
	}
}
