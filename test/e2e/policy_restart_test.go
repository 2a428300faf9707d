package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/test/cluster/harness"
)

// TestPolicyRunSurvivesAPIServerRestartAndLeaderChanges: in the middle of
// a rolling run, with a request of the run in flight and a request made by
// hand stopping a container that ignores SIGTERM, the kube-apiserver is
// stopped for 3 s and started again; later in the same run, the manager
// replica that holds the lease is deleted at once (a crash) and the other
// takes over; later still, the new leader is deleted gracefully and hands
// the lease over as it shuts down (a rolling update of the manager). The
// run finishes, the request made by hand succeeds, no container is
// recreated twice, the budget is never exceeded. Not parallel: every test
// needs the API server and the manager.
func TestPolicyRunSurvivesAPIServerRestartAndLeaderChanges(t *testing.T) {
	disturbs(t)
	s := rejuvStack(t)
	c := s.Client
	ctx := context.Background()
	ns := newNamespace(t)
	before := testappDeploymentWith(t, c, ns, "api", 6, readinessUnderLoad)
	if err := c.Create(ctx, &v1alpha1.RecreatePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "crash"},
		Spec: v1alpha1.RecreatePolicySpec{
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}},
			// A restart requested now: the run starts at once, not at the
			// next minute.
			RestartAt: &metav1.Time{Time: time.Now()},
			Rollout:   v1alpha1.Rollout{MaxUnavailable: new(intstr.FromInt32(1))},
			Recreate:  v1alpha1.RecreateTemplate{Strategy: &v1beta1.ContainerRecreateRequestStrategy{MinStartedSeconds: 3}},
		},
	}); err != nil {
		t.Fatal(err)
	}

	stopWatch := watchUnavailable(t, c, ns, map[string]string{"app": "api"})
	defer stopWatch()
	// The premise of the budget check: the node stays Ready. Were the
	// controller manager to mark it NotReady, it would mark every pod on
	// it NotReady too, and the pods' readiness would say nothing about
	// the run.
	stopNode := watchNodeNotReady()
	defer stopNode()

	// The API server goes while the run's first pod and the request made
	// by hand are in flight.
	waitRunInFlight(t, c, ns, "crash", 0)
	byHand, byHandPod, byHandBefore, _ := stubbornRequest(t, "api-restart", "", 4)
	if err := cluster.Stop(harness.ComponentAPIServer); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	if err := cluster.Start(ctx, harness.ComponentAPIServer); err != nil {
		t.Fatal(err)
	}

	// A crash of the leader once the run has recreated two pods.
	waitRunInFlight(t, c, ns, "crash", 2)
	crashed, err := s.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Kill(ctx, crashed.Name); err != nil {
		t.Fatal(err)
	}

	// A graceful handover once it has recreated four.
	waitRunInFlight(t, c, ns, "crash", 4)
	handing, err := s.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if handing.Name == crashed.Name {
		t.Fatalf("the crashed replica %s still holds the lease after two more pods", crashed.Name)
	}
	if err := s.Kube.CoreV1().Pods(handing.Namespace).Delete(ctx, handing.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	handed := time.Now()
	var next string
	waitFor(t, "the lease handed over by "+handing.Name, func() bool {
		l, err := s.Leader(ctx)
		if err == nil && l.Name != handing.Name {
			next = l.Name
		}
		return next != ""
	})
	t.Logf("%s handed the lease to %s %s after its graceful deletion", handing.Name, next, time.Since(handed).Round(100*time.Millisecond))

	run := finishRun(t, c, ns, "crash")
	if run.State != v1alpha1.RunCompleted || run.Recreated != 6 {
		t.Fatalf("run %+v, want Completed with 6 pods recreated", run)
	}
	if notReady := stopNode(); notReady != "" {
		t.Fatalf("the node went NotReady during the run (%s): the pods' readiness cannot tell what the run did", notReady)
	}
	if out := stopWatch(); out.most > 1 {
		t.Errorf("%d pods unavailable at once, maxUnavailable is 1: %s", out.most, out.worst)
	}
	recreatedOncePerPod(t, c, ns, "crash", "app=api", before, run)
	recreatedOnce(t, byHand, byHandPod, byHandBefore)
}

// watchNodeNotReady samples the nodes' Ready conditions every 500 ms until
// stop is called; stop says how one was first seen not Ready, or "".
func watchNodeNotReady() (stop func() string) {
	ctx := context.Background()
	seen := ""
	stopSampling := every(500*time.Millisecond, func() {
		nodes, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil || seen != "" {
			return
		}
		for _, node := range nodes.Items {
			if _, err := cluster.Node(node.Name); err != nil {
				continue // a kwok node
			}
			for _, cond := range node.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status != corev1.ConditionTrue {
					seen = fmt.Sprintf("node %s Ready %s: %s %s", node.Name, cond.Status, cond.Reason, cond.Message)
				}
			}
		}
	})
	return func() string {
		stopSampling()
		return seen
	}
}
