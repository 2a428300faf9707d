package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// stopIssued is when the daemon began to stop the container of the pod: the
// time of its StoppingContainer event, to the microsecond.
func stopIssued(t *testing.T, ns, pod, container string) time.Time {
	t.Helper()
	events, err := kube.EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{FieldSelector: "regarding.name=" + pod})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if e.Regarding.Kind == "Pod" && e.Reason == "StoppingContainer" && strings.HasPrefix(e.Note, "container "+container+" ") {
			return e.EventTime.Time
		}
	}
	t.Fatalf("no StoppingContainer event for container %s of pod %s/%s", container, ns, pod)
	return time.Time{}
}

// TestOrderedRecreateWaitsForEachContainer compares orderedRecreate with
// the default, from when the daemon stopped the second container, when
// the first one's old container exited and when the runtime started the
// first one's new container: ordered, the second is stopped only after the
// first one's new container runs; unordered, as soon as the first one's
// stop has returned (its old container exited), whether or not the kubelet
// has started the new one yet (that is only logged).
func TestOrderedRecreateWaitsForEachContainer(t *testing.T) {
	t.Parallel()
	c := rejuvStack(t).Client
	for _, ordered := range []bool{true, false} {
		name := map[bool]string{true: "ordered", false: "unordered"}[ordered]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ns := newNamespace(t)
			before := createPod(t, ns, twoContainerPod("web"))
			crr := newRequest(ns, name, before.Name, "app", "side")
			crr.Spec.Strategy = &v1beta1.ContainerRecreateRequestStrategy{OrderedRecreate: ordered}
			if err := c.Create(context.Background(), crr); err != nil {
				t.Fatal(err)
			}
			got, _ := waitCompleted(t, c, crr, 90*time.Second)
			if got.Status.Result != v1beta1.ResultSucceeded {
				t.Fatalf("result %q: %+v", got.Status.Result, got.Status.ContainerRecreateStates)
			}
			after, err := kube.CoreV1().Pods(ns).Get(context.Background(), before.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			newAppStarted, _ := criTimes(t, containerStatus(after, "app").ContainerID)
			_, oldAppExited := criTimes(t, containerStatus(before, "app").ContainerID)
			sideStop := stopIssued(t, ns, before.Name, "side")
			gap := sideStop.Sub(newAppStarted)
			t.Logf("%s: the daemon stopped side %s after the new app container started, %s after the old one exited",
				name, gap.Round(time.Millisecond), sideStop.Sub(oldAppExited).Round(time.Millisecond))
			if ordered && gap <= 0 {
				t.Errorf("ordered: side was stopped %s before app's new container started", -gap)
			}
			if !ordered && !sideStop.After(oldAppExited) {
				t.Errorf("unordered: side was stopped %s before app's old container exited; want one after the other", oldAppExited.Sub(sideStop))
			}
		})
	}
}

// TestRequestRightAfterStartStillRecreates creates a request within a
// second of the container's start, where comparing one-second timestamps
// would take the running container for an already recreated one: it must
// still be stopped and replaced.
func TestRequestRightAfterStartStillRecreates(t *testing.T) {
	t.Parallel()
	c := rejuvStack(t).Client
	ns := newNamespace(t)
	spec := testappPod("fresh")
	spec.Spec.Containers[0].ReadinessProbe = nil
	if _, err := kube.CoreV1().Pods(ns).Create(context.Background(), spec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	running := waitPod(t, ns, spec.Name, "running its container", func(p *corev1.Pod) bool {
		return containerStatus(p, "app").State.Running != nil
	})
	first := containerStatus(running, "app")
	crr := newRequest(ns, "fresh", spec.Name, "app")
	if err := c.Create(context.Background(), crr); err != nil {
		t.Fatal(err)
	}
	age := time.Since(first.State.Running.StartedAt.Time)
	got, _ := waitCompleted(t, c, crr, 60*time.Second)
	after, err := kube.CoreV1().Pods(ns).Get(context.Background(), spec.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := containerStatus(after, "app")
	t.Logf("request created %s after the container's recorded start", age.Round(time.Millisecond))
	if got.Status.Result != v1beta1.ResultSucceeded || now.RestartCount != first.RestartCount+1 || now.ContainerID == first.ContainerID {
		t.Errorf("result %q, restartCount %d -> %d, ID %s -> %s: want the running container replaced",
			got.Status.Result, first.RestartCount, now.RestartCount, first.ContainerID, now.ContainerID)
	}
}
