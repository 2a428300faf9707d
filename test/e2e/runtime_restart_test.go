package e2e

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/test/cluster/harness"
)

// TestDaemonRecoversFromContainerdRestart stops the node's containerd while
// the daemon runs a request's preStop, and starts it again 7 s later: the
// daemon says the runtime does not answer, then that it answers again, and
// the request ends Succeeded with the container recreated once. Not
// parallel: the other tests' pods would see the runtime go away too.
func TestDaemonRecoversFromContainerdRestart(t *testing.T) {
	disturbs(t)
	stack := rejuvStack(t)
	c := stack.Client
	ns := newNamespace(t)
	spec := testappPod("runtime")
	// The request copies the container's preStop: 3 s in which to stop
	// the runtime.
	spec.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", "sleep 3"}}}}
	pod := createPod(t, ns, spec)
	before := containerStatus(pod, "app")

	crr := newRequest(ns, "through-restart", pod.Name, "app")
	if err := c.Create(context.Background(), crr); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	node, err := cluster.Node(pod.Spec.NodeName)
	if err != nil {
		t.Fatal(err)
	}
	runtime := node.Component(harness.ComponentContainerd)
	if err := cluster.Stop(runtime); err != nil {
		t.Fatal(err)
	}
	// Longer than the daemon's check interval, so it notices.
	time.Sleep(7 * time.Second)
	if err := cluster.Start(context.Background(), runtime); err != nil {
		t.Fatalf("start containerd again: %v", err)
	}

	got, _ := waitCompleted(t, c, crr, 2*time.Minute)
	if got.Status.Result != v1beta1.ResultSucceeded {
		t.Errorf("request ended %s: %s %+v", got.Status.Result, got.Status.Message, got.Status.ContainerRecreateStates)
	}
	after := waitPod(t, ns, pod.Name, "Ready with a new container", func(p *corev1.Pod) bool {
		return podReady(true)(p) && containerStatus(p, "app").ContainerID != before.ContainerID
	})
	if n := containerStatus(after, "app").RestartCount; n != before.RestartCount+1 {
		t.Errorf("restartCount %d -> %d, want +1", before.RestartCount, n)
	}
	// The daemon checks the runtime every 5 s: the second line may come
	// a check after the request completed.
	daemon, err := stack.DaemonPod(context.Background(), pod.Spec.NodeName)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"container runtime not answering", "container runtime answers again"} {
		waitLog(t, daemon, want, 15*time.Second)
	}
}
