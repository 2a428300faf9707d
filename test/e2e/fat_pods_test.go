package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/test/deploy"
)

// TestFatPodsDoNotCrashTheManager: anyone who may create pods creates 120
// Pending pods, each with a distinct 250 KB annotation and a 900 KB
// preStop command (1.15 MB objects, within the API server's limits),
// which once OOM-killed both manager replicas within a minute and kept
// them crash-looping as long as the pods existed. The request webhook
// answers for those pods. A replica that starts while they exist, which
// was still OOM-killed while it listed them, becomes ready and stays so
// without a restart, and the replica that kept running beside them all
// along does not restart either (TestBoundsHoldUnderAbuse watches both
// running replicas beside fat pods and more for a minute).
func TestFatPodsDoNotCrashTheManager(t *testing.T) {
	s := rejuvStack(t)
	ctx := context.Background()
	ns := newNamespace(t)
	const fat = 120
	before := managerContainers(t, s)
	if len(before) == 0 {
		t.Fatal("premise: no manager replica is ready")
	}
	createFatPods(t, s.Client, ns, fat)
	sample, err := kube.CoreV1().Pods(ns).Get(ctx, "fat-7", metav1.GetOptions{})
	if err != nil || sample.Size() < 1_100_000 || sample.Spec.NodeName != "" {
		t.Fatalf("premise: pod fat-7 is not a Pending pod of 1.15 MB: %v", err)
	}
	if now := managerContainers(t, s); fmt.Sprint(now) != fmt.Sprint(before) {
		t.Fatalf("the manager's ready pods and their restart counts went from %v to %v once %d fat pods exist", before, now, fat)
	}

	// The request webhook answers for a fat pod, from the pod it read.
	crr := newRequest(ns, "for-fat", "fat-7", "app")
	err = s.Client.Create(ctx, crr, client.DryRunAll)
	if err == nil || !strings.Contains(err.Error(), "the pod is not scheduled to a node yet") {
		t.Errorf("a request for a Pending fat pod: %v, want the webhook's refusal naming the unscheduled pod", err)
	}
	t.Logf("%d pods of %d bytes: %s", fat, sample.Size(), heapLine(leaderMetrics(t)))

	// A replica that starts while they exist lists them all before it is
	// ready: its replacement becomes ready, and stays so, without a restart.
	replicas, err := s.Pods(ctx, deploy.HealerSelector)
	if err != nil || len(replicas) == 0 {
		t.Fatalf("premise: list the manager's replicas: %v", err)
	}
	if err := kube.CoreV1().Pods(deploy.Namespace).Delete(ctx, replicas[0].Name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete manager replica %s: %v", replicas[0].Name, err)
	}
	var replacement types.UID
	waitWithin(t, "a replacement manager replica ready", 3*time.Minute, func() bool {
		for uid := range managerContainers(t, s) {
			if _, old := before[uid]; !old {
				replacement = uid
				return true
			}
		}
		return false
	})
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Second) {
		now := managerContainers(t, s)
		if restarts, ready := now[replacement]; !ready || restarts != 0 {
			t.Fatalf("the replica that replaced %s while %d fat pods exist: ready %v, %d restarts; want ready without a restart",
				replicas[0].Name, fat, ready, restarts)
		}
		for uid, restarts := range before {
			if uid == replicas[0].UID {
				continue
			}
			if got, ready := now[uid]; !ready || got != restarts {
				t.Fatalf("the replica %s kept beside %d fat pods: ready %v, restarts %d -> %d; want ready without a restart", uid, fat, ready, restarts, got)
			}
		}
	}
	t.Logf("the replica that replaced %s became ready beside them, and stayed so 30 s without a restart, as did the one kept", replicas[0].Name)
}

// managerContainers are the manager's ready pods, by UID, with the sum of
// their containers' restart counts; a pod not ready is left out.
func managerContainers(t *testing.T, s *deploy.Stack) map[types.UID]int32 {
	t.Helper()
	list, err := s.Pods(context.Background(), deploy.HealerSelector)
	if err != nil {
		t.Fatal(err)
	}
	out := map[types.UID]int32{}
	for _, p := range list {
		if c := pods.Condition(&p, corev1.PodReady); c == nil || c.Status != corev1.ConditionTrue {
			continue
		}
		var restarts int32
		for _, cs := range p.Status.ContainerStatuses {
			restarts += cs.RestartCount
		}
		out[p.UID] = restarts
	}
	return out
}

// heapLine is the Go heap line of a metrics page.
func heapLine(metrics string) string {
	for line := range strings.Lines(metrics) {
		if strings.HasPrefix(line, "go_memstats_heap_alloc_bytes ") {
			return "the leader's " + strings.TrimSpace(line)
		}
	}
	return "no heap figure"
}
