package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

func newRequest(ns, name, pod string, containers ...string) *v1beta1.ContainerRecreateRequest {
	crr := &v1beta1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       v1beta1.ContainerRecreateRequestSpec{PodName: pod, ActiveDeadlineSeconds: ptr.To[int64](120)},
	}
	for _, c := range containers {
		crr.Spec.Containers = append(crr.Spec.Containers, v1beta1.ContainerRecreateRequestContainer{Name: c})
	}
	return crr
}

// waitCompleted polls the request every 20 ms and returns it, with the time
// its completion was first seen.
func waitCompleted(t *testing.T, c client.Client, crr *v1beta1.ContainerRecreateRequest, timeout time.Duration) (*v1beta1.ContainerRecreateRequest, time.Time) {
	t.Helper()
	var got *v1beta1.ContainerRecreateRequest
	var seen time.Time
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		cur := &v1beta1.ContainerRecreateRequest{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(crr), cur); err != nil {
			return false, nil
		}
		got, seen = cur, time.Now()
		return cur.Status.Phase == v1beta1.PhaseCompleted, nil
	})
	if err != nil {
		t.Fatalf("ContainerRecreateRequest %s not completed within %s; status %+v", crr.Name, timeout, statusOrNil(got))
	}
	return got, seen
}

func statusOrNil(c *v1beta1.ContainerRecreateRequest) any {
	if c == nil {
		return nil
	}
	return c.Status
}

// TestMinStartedSecondsThenTTL: Succeeded only once the new container has
// run minStartedSeconds (counted from the runtime's start time, and seen
// promptly, not on a coarse re-check), then deleted after its TTL.
func TestMinStartedSecondsThenTTL(t *testing.T) {
	t.Parallel()
	c := rejuvStack(t).Client
	ns := newNamespace(t)
	pod := createPod(t, ns, testappPod("web"))
	crr := newRequest(ns, "min-started", pod.Name, "app")
	crr.Spec.Strategy = &v1beta1.ContainerRecreateRequestStrategy{MinStartedSeconds: 5}
	crr.Spec.TTLSecondsAfterFinished = ptr.To[int32](3)
	if err := c.Create(context.Background(), crr); err != nil {
		t.Fatal(err)
	}
	got, seen := waitCompleted(t, c, crr, 60*time.Second)
	if got.Status.Result != v1beta1.ResultSucceeded {
		t.Fatalf("result %q: %+v", got.Status.Result, got.Status.ContainerRecreateStates)
	}
	after, err := kube.CoreV1().Pods(ns).Get(context.Background(), pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	started, _ := criTimes(t, containerStatus(after, "app").ContainerID)
	ran := seen.Sub(started)
	t.Logf("completion seen %s after the new container started (minStartedSeconds 5)", ran.Round(time.Millisecond))
	if ran < 5*time.Second {
		t.Errorf("completed after the new container ran %s, before minStartedSeconds 5", ran)
	}
	if ran > 7*time.Second {
		t.Errorf("completed only %s after the new container started: a coarse re-check, not a timer", ran)
	}

	err = wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 15*time.Second, true, func(ctx context.Context) (bool, error) {
		return apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(crr), &v1beta1.ContainerRecreateRequest{})), nil
	})
	if err != nil {
		t.Fatalf("not deleted after ttlSecondsAfterFinished 3: %v", err)
	}
	// The TTL counts from completionTime, which has one-second resolution.
	if gone := time.Since(got.Status.CompletionTime.Time); gone < 3*time.Second {
		t.Errorf("deleted %s after its completionTime, before its TTL of 3s", gone)
	}
}

// manyContainerPod runs n testapps, app-0 to app-(n-1), each on its own port.
func manyContainerPod(name string, n int) *corev1.Pod {
	pod := testappPod(name)
	base := pod.Spec.Containers[0]
	pod.Spec.Containers = nil
	for i := range n {
		c := *base.DeepCopy()
		c.Name = fmt.Sprintf("app-%d", i)
		c.Args = []string{fmt.Sprintf("--listen=:%d", 8080+i)}
		c.Ports = []corev1.ContainerPort{{ContainerPort: int32(8080 + i)}}
		c.ReadinessProbe = nil
		pod.Spec.Containers = append(pod.Spec.Containers, c)
	}
	return pod
}

// TestQueuedRequestsRunOneAfterAnotherInCreationOrder queues ten requests
// on one pod (one container each, so that the kubelet's restart back-off
// never applies): each starts as soon as the previous completes.
func TestQueuedRequestsRunOneAfterAnotherInCreationOrder(t *testing.T) {
	t.Parallel()
	c := rejuvStack(t).Client
	ctx := context.Background()
	ns := newNamespace(t)
	const n = 10
	pod := createPod(t, ns, manyContainerPod("web", n))
	var names []string
	for i := range n {
		crr := newRequest(ns, fmt.Sprintf("q-%02d", i), pod.Name, fmt.Sprintf("app-%d", i))
		if err := c.Create(ctx, crr); err != nil {
			t.Fatal(err)
		}
		names = append(names, crr.Name)
	}
	var order []string
	done := map[string]bool{}
	start := time.Now()
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		list := &v1beta1.ContainerRecreateRequestList{}
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return false, nil
		}
		running := 0
		for _, r := range list.Items {
			if r.Status.Phase == v1beta1.PhaseRecreating {
				running++
			}
			if r.Status.Phase == v1beta1.PhaseCompleted && !done[r.Name] {
				done[r.Name] = true
				order = append(order, r.Name)
				if r.Status.Result != v1beta1.ResultSucceeded {
					t.Errorf("%s: %s %+v", r.Name, r.Status.Result, r.Status.ContainerRecreateStates)
				}
			}
		}
		if running > 1 {
			t.Errorf("%d requests recreating on one pod at once", running)
		}
		return len(done) == n, nil
	})
	if err != nil {
		t.Fatalf("only %d of %d completed (%v): %v", len(done), n, order, err)
	}
	t.Logf("%d queued requests completed in %s", n, time.Since(start).Round(time.Millisecond))
	if strings.Join(order, " ") != strings.Join(names, " ") {
		t.Errorf("completion order %v, want creation order %v", order, names)
	}
	after, err := kube.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		name := fmt.Sprintf("app-%d", i)
		if got, was := containerStatus(after, name).RestartCount, containerStatus(pod, name).RestartCount; got != was+1 {
			t.Errorf("%s restartCount %d -> %d, want +1", name, was, got)
		}
	}
}
