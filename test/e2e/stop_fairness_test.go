package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
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
	var stops []*v1beta1.ContainerRecreateRequest
	for i := range 4 {
		spec := testappPod(fmt.Sprintf("stubborn-%d", i))
		spec.Spec.TerminationGracePeriodSeconds = new(int64(600))
		spec.Spec.Containers[0].Args = []string{"--ignore-sigterm"}
		pod := createPod(t, stubborn, spec)
		// The namespace goes at the end of the test: without this, its
		// pods would keep it for their 10-minute grace.
		t.Cleanup(func() {
			_ = kube.CoreV1().Pods(stubborn).Delete(context.Background(), pod.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))})
		})
		crr := newRequest(stubborn, pod.Name, pod.Name, "app")
		crr.Spec.ActiveDeadlineSeconds = nil
		if err := s.Client.Create(ctx, crr); err != nil {
			t.Fatal(err)
		}
		stops = append(stops, crr)
	}
	// The premise: all four stops are under way (each pod has its
	// StoppingContainer event), and wait for the grace.
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		events, err := kube.EventsV1().Events(stubborn).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		stopping := map[string]bool{}
		for _, e := range events.Items {
			if e.Regarding.Kind == "Pod" && e.Reason == "StoppingContainer" {
				stopping[e.Regarding.Name] = true
			}
		}
		return len(stopping) == len(stops), nil
	})
	if err != nil {
		t.Fatalf("the stubborn namespace's four stops are not all under way: %v", err)
	}

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
	for _, crr := range stops {
		cur := &v1beta1.ContainerRecreateRequest{}
		if err := s.Client.Get(ctx, client.ObjectKeyFromObject(crr), cur); err != nil {
			t.Fatal(err)
		}
		if cur.Status.Phase == v1beta1.PhaseCompleted {
			t.Errorf("stubborn request %s completed: %s", crr.Name, cur.Status.Message)
		}
	}
}
