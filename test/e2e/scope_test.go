package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// TestPodDeletedDuringARequest deletes the pod while its container's preStop
// sleeps: the request ends with the reason and the daemon goes on working.
func TestPodDeletedDuringARequest(t *testing.T) {
	t.Parallel()
	c := rejuvStack(t).Client
	ns := newNamespace(t)
	spec := testappPod("doomed")
	spec.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 5}}}
	spec.Spec.TerminationGracePeriodSeconds = new(int64(10))
	pod := createPod(t, ns, spec)
	crr := newRequest(ns, "doomed", pod.Name, "app")
	if err := c.Create(context.Background(), crr); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if err := kube.CoreV1().Pods(ns).Delete(context.Background(), pod.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))}); err != nil {
		t.Fatal(err)
	}
	got, _ := waitCompleted(t, c, crr, 60*time.Second)
	// Without a grace period too, the API server writes the pod with a
	// deletionTimestamp before it removes it: the manager may see it being
	// deleted, or gone.
	deleted := strings.Contains(got.Status.Message, "pod doomed was deleted") || got.Status.Message == "pod is being deleted"
	if !deleted || got.Status.ContainerRecreateStates[0].Phase != v1beta1.PhaseFailed {
		t.Errorf("status = %+v, want the deletion as the reason and app Failed", got.Status)
	}
	// The daemon still serves other requests.
	other := createPod(t, ns, testappPod("next"))
	next := newRequest(ns, "next", other.Name, "app")
	if err := c.Create(context.Background(), next); err != nil {
		t.Fatal(err)
	}
	if got, _ := waitCompleted(t, c, next, 60*time.Second); got.Status.Result != v1beta1.ResultSucceeded {
		t.Errorf("a request after the deletion: %q %+v", got.Status.Result, got.Status.ContainerRecreateStates)
	}
}

// TestRequestForAnotherNodesPodIsLeftAlone makes a pod on a node with no
// kubelet (a Node object only) look running; the node's daemon is absent, and
// this node's daemon must not touch the request.
func TestRequestForAnotherNodesPodIsLeftAlone(t *testing.T) {
	t.Parallel()
	c := rejuvStack(t).Client
	ctx := context.Background()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{GenerateName: "fake-node-"}}
	if err := c.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), node) })
	ns := newNamespace(t)
	pod := testappPod("elsewhere")
	pod.Namespace = ns
	pod.Spec.NodeName = node.Name
	if err := c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
		Name: "app", Image: pod.Spec.Containers[0].Image, ContainerID: "containerd://0123456789abcdef", Ready: true,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}},
	}}}
	if err := c.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	crr := newRequest(ns, "elsewhere", pod.Name, "app")
	if err := c.Create(ctx, crr); err != nil {
		t.Fatal(err)
	}
	if crr.Labels[v1beta1.NodeNameLabel] != node.Name {
		t.Fatalf("node label = %q, want %s", crr.Labels[v1beta1.NodeNameLabel], node.Name)
	}
	// Five seconds is long enough for the local daemon to have acted.
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 5*time.Second, true, func(ctx context.Context) (bool, error) {
		cur := &v1beta1.ContainerRecreateRequest{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(crr), cur); err != nil {
			return false, err
		}
		return cur.Status.Phase != "", nil
	})
	if err == nil {
		cur := &v1beta1.ContainerRecreateRequest{}
		_ = c.Get(ctx, client.ObjectKeyFromObject(crr), cur)
		t.Errorf("a daemon touched another node's request: %+v", cur.Status)
	}
	// No daemon runs there: the manager says so once the pickup timeout
	// (5s in the test install) has passed.
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		cur := &v1beta1.ContainerRecreateRequest{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(crr), cur); err != nil {
			return false, err
		}
		return strings.HasPrefix(cur.Status.Message, "no daemon has picked up this request within 5s"), nil
	})
	if err != nil {
		t.Errorf("the manager did not report the missing daemon: %v", err)
	}
}
