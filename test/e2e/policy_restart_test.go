package e2e

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/test/cluster/harness"
)

// TestPolicyRunSurvivesAPIServerRestartAndLeaderKilled: in the middle of a
// rolling run, with a request in flight, the kube-apiserver is stopped for
// 3 s and started again; later in the same run, the manager replica that
// holds the lease is deleted at once and the other replica takes over. The
// run finishes, no container is recreated twice, the budget is never
// exceeded. Not parallel: every test needs the API server and the manager.
func TestPolicyRunSurvivesAPIServerRestartAndLeaderKilled(t *testing.T) {
	s := rejuvStack(t)
	c := s.Client
	ctx := context.Background()
	ns := newNamespace(t)
	before := testappDeployment(t, c, ns, "api", 4)
	if err := c.Create(ctx, &v1alpha1.RecreatePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "crash"},
		Spec: v1alpha1.RecreatePolicySpec{
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}},
			Schedule: &v1alpha1.Schedule{Cron: "* * * * *"},
			Rollout:  v1alpha1.Rollout{MaxUnavailable: new(intstr.FromInt32(1))},
			Recreate: v1alpha1.RecreateTemplate{Strategy: &v1beta1.ContainerRecreateRequestStrategy{MinStartedSeconds: 3}},
		},
	}); err != nil {
		t.Fatal(err)
	}

	stopWatch := watchUnavailable(c, ns, map[string]string{"app": "api"})
	defer stopWatch()

	// Restart the API server while the first pod's request is in flight,
	// and kill the leader once the run has recreated two pods.
	waitRunInFlight(t, c, ns, "crash", 0)
	if err := cluster.Stop(harness.ComponentAPIServer); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	if err := cluster.Start(ctx, harness.ComponentAPIServer); err != nil {
		t.Fatal(err)
	}
	waitRunInFlight(t, c, ns, "crash", 2)
	leader, err := s.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Kill(ctx, leader.Name); err != nil {
		t.Fatal(err)
	}

	run := finishRun(t, c, ns, "crash")
	if run.State != v1alpha1.RunCompleted || run.Recreated != 4 {
		t.Fatalf("run %+v, want Completed with 4 pods recreated", run)
	}
	next, err := s.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if next.Name == leader.Name {
		t.Errorf("the killed replica %s still holds the lease", leader.Name)
	}
	if maxUnavailable := stopWatch(); maxUnavailable > 1 {
		t.Errorf("%d pods unavailable at once, maxUnavailable is 1", maxUnavailable)
	}
	recreatedOncePerPod(t, c, ns, "crash", "app=api", before, run)
}
