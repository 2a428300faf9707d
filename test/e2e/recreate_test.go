package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// twoContainerPod runs testapp twice, each with a readiness probe.
func twoContainerPod(name string) *corev1.Pod {
	pod := testappPod(name)
	side := *pod.Spec.Containers[0].DeepCopy()
	side.Name = "side"
	side.Args = []string{"--listen=:8081"}
	side.Ports = []corev1.ContainerPort{{ContainerPort: 8081}}
	side.ReadinessProbe.HTTPGet.Port = intstr.FromInt32(8081)
	pod.Spec.Containers = append(pod.Spec.Containers, side)
	return pod
}

// TestCRRRecreatesTwoContainersInPlace recreates both containers of a pod
// with the manager and the daemon running: new containers, same pod, a file
// on an emptyDir kept and one on the container's filesystem gone.
func TestCRRRecreatesTwoContainersInPlace(t *testing.T) {
	t.Parallel()
	c := rejuvStack(t).Client
	ctx := context.Background()
	ns := newNamespace(t)
	before := createPod(t, ns, controlledPod("web"))
	execIn(t, ns, before.Name, "app", "sh", "-c", "echo kept > /ctl/kept && echo lost > /tmp/lost")

	crr := &v1beta1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "both"},
		Spec: v1beta1.ContainerRecreateRequestSpec{
			PodName:               before.Name,
			Containers:            []v1beta1.ContainerRecreateRequestContainer{{Name: "app"}, {Name: "side"}},
			Strategy:              &v1beta1.ContainerRecreateRequestStrategy{MinStartedSeconds: 1},
			ActiveDeadlineSeconds: ptr.To[int64](120),
		},
	}
	if err := c.Create(ctx, crr); err != nil {
		t.Fatalf("create ContainerRecreateRequest: %v", err)
	}
	var got *v1beta1.ContainerRecreateRequest
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		cur := &v1beta1.ContainerRecreateRequest{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(crr), cur); err != nil {
			return false, nil
		}
		got = cur
		return cur.Status.Phase == v1beta1.PhaseCompleted, nil
	})
	if err != nil {
		t.Fatalf("not completed: %v; status %+v", err, got.Status)
	}
	if got.Status.Result != v1beta1.ResultSucceeded {
		t.Fatalf("result %q, states %+v, message %q", got.Status.Result, got.Status.ContainerRecreateStates, got.Status.Message)
	}
	after, err := kube.CoreV1().Pods(ns).Get(ctx, before.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"app", "side"} {
		old, now := containerStatus(before, name), containerStatus(after, name)
		if now.RestartCount != old.RestartCount+1 || now.ContainerID == old.ContainerID {
			t.Errorf("%s: restartCount %d -> %d, ID %s -> %s; want +1 and a new ID", name, old.RestartCount, now.RestartCount, old.ContainerID, now.ContainerID)
		}
	}
	// A volume outlives the container; its own filesystem does not.
	files := execIn(t, ns, before.Name, "app", "sh", "-c", "cat /ctl/kept; cat /tmp/lost 2>/dev/null || echo no /tmp/lost")
	if strings.TrimSpace(files) != "kept\nno /tmp/lost" {
		t.Errorf("after the recreation app sees %q, want the emptyDir file kept and the container file gone", files)
	}
	metrics := daemonMetrics(t, before.Spec.NodeName)
	for _, want := range []string{`rejuv_daemon_recreations_total{result="Succeeded"}`, `rejuv_daemon_recreate_phase_seconds_count{phase="stop"}`,
		`rejuv_daemon_recreate_phase_seconds_count{phase="restart_wait"}`, `rejuv_daemon_recreate_phase_seconds_count{phase="min_started"}`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("daemon metrics lack %s:\n%s", want, grepLines(metrics, "rejuv_daemon_rec"))
		}
	}
	podEvents, err := kube.EventsV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "regarding.name=" + before.Name})
	if err != nil {
		t.Fatal(err)
	}
	stopping := 0
	for _, e := range podEvents.Items {
		if e.Reason == "StoppingContainer" {
			stopping++
		}
	}
	if stopping != 2 {
		t.Errorf("the pod has %d StoppingContainer events, want one per container", stopping)
	}
	if after.UID != before.UID || after.Status.PodIP != before.Status.PodIP {
		t.Errorf("pod changed: UID %s -> %s, IP %s -> %s", before.UID, after.UID, before.Status.PodIP, after.Status.PodIP)
	}
}
