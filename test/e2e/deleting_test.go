package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// TestPodDeletedDuringTheUnreadyGraceIsLeftToTheKubelet: a request waits
// out a 20 s unready grace on a pod whose app container has an exec
// preStop hook that appends a line to a file on the pod's shared volume;
// the pod is deleted, with a 35 s grace period, during the request's grace.
// The kubelet runs the hook and stops the pod; Rejuv touches it no more.
// Once the request's grace would have ended, the file holds one line (the
// kubelet's run), the daemon recorded no stop, app still runs the container
// it ran before, and the request ended Failed: "pod is being deleted". Both
// containers outlive their SIGTERM until the pod's grace period ends, so
// that a second hook and a stop of Rejuv's would find app running, and side
// can be asked for the file.
func TestPodDeletedDuringTheUnreadyGraceIsLeftToTheKubelet(t *testing.T) {
	t.Parallel()
	c := rejuvStack(t).Client
	ctx := context.Background()
	ns := gatedNamespace(t, c)
	spec := controlledPod("draining")
	for i := range spec.Spec.Containers {
		spec.Spec.Containers[i].Args = append(spec.Spec.Containers[i].Args, "--ignore-sigterm")
	}
	spec.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{
		Exec: &corev1.ExecAction{Command: []string{"sh", "-c", "echo ran >> /ctl/prestop"}}}}
	spec.Spec.TerminationGracePeriodSeconds = ptr.To[int64](35)
	pod := createPod(t, ns, spec)
	before := containerStatus(pod, "app")

	crr := newRequest(ns, "draining", pod.Name, "app")
	crr.Spec.Strategy = &v1beta1.ContainerRecreateRequestStrategy{UnreadyGracePeriodSeconds: ptr.To[int64](20)}
	if err := c.Create(ctx, crr); err != nil {
		t.Fatal(err)
	}
	waitPod(t, ns, pod.Name, "NotReady", podReady(false))
	// The kubelet turned the pod NotReady before this moment: the daemon
	// would stop app by 21 s from now (the grace, from the next full
	// second after the transition).
	graceEnds := time.Now().Add(21 * time.Second)
	// The premise: the daemon waits out the grace; no hook has run.
	waitFor(t, "the daemon waiting out the unready grace", func() bool {
		cur := &v1beta1.ContainerRecreateRequest{}
		return c.Get(ctx, client.ObjectKeyFromObject(crr), cur) == nil &&
			cur.Status.Message == "the pod is not ready; containers are stopped after the unready grace (20s)"
	})
	if out := execIn(t, ns, pod.Name, "side", "sh", "-c", "cat /ctl/prestop 2>/dev/null; true"); out != "" {
		t.Fatalf("premise: the preStop hook ran before the pod's deletion: %q", out)
	}
	if left := time.Until(graceEnds); left < 5*time.Second {
		t.Fatalf("premise: the pod is deleted %s before the request's grace ends; want it well inside the grace", left)
	}

	if err := kube.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](35)}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(graceEnds.Add(4 * time.Second)))

	if runs := strings.Fields(execIn(t, ns, pod.Name, "side", "cat", "/ctl/prestop")); len(runs) != 1 {
		t.Errorf("the preStop hook ran %d times (%q), want once: the kubelet's", len(runs), runs)
	}
	events, err := kube.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if e.ReportingController == "rejuv-daemon" {
			t.Errorf("the daemon recorded %s on %s %s: %s", e.Reason, e.Regarding.Kind, e.Regarding.Name, e.Note)
		}
	}
	now, err := kube.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the pod is gone before its grace period ended: %v", err)
	}
	if app := containerStatus(now, "app"); app.ContainerID != before.ContainerID || app.State.Running == nil {
		t.Errorf("app runs %s (running: %t), want %s still running: the kubelet stops it at the end of the pod's grace period, nothing before", app.ContainerID, app.State.Running != nil, before.ContainerID)
	}
	got := &v1beta1.ContainerRecreateRequest{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(crr), got); err != nil {
		t.Fatal(err)
	}
	states := got.Status.ContainerRecreateStates
	if got.Status.Phase != v1beta1.PhaseCompleted || got.Status.Result != v1beta1.ResultFailed || got.Status.Message != "pod is being deleted" ||
		len(states) != 1 || states[0].IsKilled || states[0].PreStopStartedAt != nil {
		t.Errorf("request %s %s %q, states %+v; want Completed, Failed, \"pod is being deleted\", app neither hooked nor stopped", got.Status.Phase, got.Status.Result, got.Status.Message, states)
	}
}
