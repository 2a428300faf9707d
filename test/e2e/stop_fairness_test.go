package e2e

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// TestAStubbornNamespaceDoesNotDelayAnother: one namespace's four requests
// on containers that ignore SIGTERM, with a 10-minute grace and no
// deadline, wait for their grace as the daemon's 4 workers once did;
// another namespace's request made then is recreated in its normal time.
func TestAStubbornNamespaceDoesNotDelayAnother(t *testing.T) {
	s := rejuvStack(t)
	ctx := context.Background()
	stubborn := newNamespace(t)
	stops := holdStops(t, s.Client, stubborn, 4)

	other := newNamespace(t)
	pod := createPod(t, other, testappPod("web"))
	before := containerStatus(pod, "app")
	crr := newRequest(other, "web", pod.Name, "app")
	if err := s.Client.Create(ctx, crr); err != nil {
		t.Fatal(err)
	}
	created := time.Now()
	got, _ := waitCompleted(t, s.Client, crr, 60*time.Second)
	if took := time.Since(created); got.Status.Result != v1beta1.ResultSucceeded || took > 30*time.Second {
		t.Fatalf("the other namespace's request: result %q after %s, want Succeeded within 30s: %s %+v", got.Status.Result, took.Round(time.Second), got.Status.Message, got.Status.ContainerRecreateStates)
	}
	after := waitPod(t, other, pod.Name, "running a new container", func(p *corev1.Pod) bool {
		return containerStatus(p, "app").ContainerID != before.ContainerID
	})
	if n := containerStatus(after, "app").RestartCount; n != before.RestartCount+1 {
		t.Errorf("restartCount %d, want %d", n, before.RestartCount+1)
	}
	// And the stubborn stops still wait: the other request did not come
	// after them.
	for _, name := range stops {
		cur := &v1beta1.ContainerRecreateRequest{}
		if err := s.Client.Get(ctx, client.ObjectKey{Namespace: stubborn, Name: name}, cur); err != nil {
			t.Fatal(err)
		}
		if cur.Status.Phase == v1beta1.PhaseCompleted {
			t.Errorf("stubborn request %s completed: %s", name, cur.Status.Message)
		}
	}
}
