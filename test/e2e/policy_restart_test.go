package e2e

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// TestPolicyRunSurvivesLeaderKilled: the manager replica that holds the
// lease is deleted at once in the middle of a rolling run. The other
// replica takes over; the run finishes, no container is recreated twice,
// the budget is never exceeded. Not parallel: it kills the manager the
// parallel tests need.
func TestPolicyRunSurvivesLeaderKilled(t *testing.T) {
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

	// Kill the manager once the run has recreated its first pod.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		run := readPolicy(t, c, ns, "crash").Status.Run
		if run != nil && run.Recreated >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run did not get going: %+v", run)
		}
		time.Sleep(100 * time.Millisecond)
	}
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
	perPod := requestsPerPod(t, c, ns, "crash", run)
	after := waitPods(t, c, ns, "app=api", 4)
	for _, b := range before {
		a := after[b.Name]
		if a == nil || a.UID != b.UID {
			t.Errorf("pod %s was replaced", b.Name)
			continue
		}
		if perPod[b.Name] != 1 || containerStatus(a, "app").RestartCount != containerStatus(b, "app").RestartCount+1 {
			t.Errorf("pod %s: %d requests, restartCount %d -> %d; want exactly one recreation", b.Name, perPod[b.Name], containerStatus(b, "app").RestartCount, containerStatus(a, "app").RestartCount)
		}
	}
}
