package recreatepolicy

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/planner"
)

// TestRestartAtRollsOnce: a policy with only restartAt waits for its time,
// then restarts every selected pod once, one at a time; the same restartAt
// is never run again, by this controller or a new one, even once the
// requests are gone; a later restartAt restarts them again.
func TestRestartAtRollsOnce(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	createPods(t, ns, "web", 3, c.clock.Now().Add(-time.Hour))
	at := c.clock.Now().Add(time.Minute)
	p := createPolicy(t, ns, "restart-deployment-web", v1alpha1.RecreatePolicySpec{
		Selector:  metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		RestartAt: &metav1.Time{Time: at},
		Rollout:   v1alpha1.Rollout{MaxUnavailable: new(intstr.FromInt32(1))},
	})

	if res := c.reconcile(t, p); res.RequeueAfter != time.Minute {
		t.Errorf("before restartAt, requeue after %v, want 1m (the time left)", res.RequeueAfter)
	}
	if n := len(requestsOf(t, p)); n != 0 || getPolicy(t, p).Status.Run != nil {
		t.Fatalf("before restartAt: %d requests, run %+v", n, getPolicy(t, p).Status.Run)
	}

	c.clock.SetTime(at.Add(time.Second))
	// While pods are left, the run is looked at again without waiting for
	// an event: a budget may let a pod through without one.
	if res := c.reconcile(t, p); res.RequeueAfter != planner.RunRecheck {
		t.Errorf("with the run going, requeue after %v, want %v", res.RequeueAfter, planner.RunRecheck)
	}
	rolled := roll(t, c, p)
	if rolled.requests != 3 || rolled.maxInFlight != 1 {
		t.Fatalf("%d requests, at most %d in flight; want 3, one at a time", rolled.requests, rolled.maxInFlight)
	}
	for _, crr := range requestsOf(t, p) {
		if crr.Labels["rejuv.dev/trigger"] != "restart" || crr.Annotations["rejuv.dev/run"] != at.UTC().Format(time.RFC3339) ||
			!strings.Contains(crr.Annotations["rejuv.dev/reason"], "rolling restart requested for "+at.UTC().Format(time.RFC3339)) {
			t.Errorf("request %s: labels %v annotations %v", crr.Name, crr.Labels, crr.Annotations)
		}
	}
	status := getPolicy(t, p).Status
	if status.Run == nil || !status.Run.Requested || status.Run.State != v1alpha1.RunCompleted || status.Run.Recreated != 3 {
		t.Errorf("run %+v, want a requested run Completed with 3 pods", status.Run)
	}
	if status.RestartedAt == nil || !status.RestartedAt.Time.Equal(at) {
		t.Errorf("restartedAt %v, want %s", status.RestartedAt, at.UTC())
	}

	// Never twice: not by a pass hours later, not by a new controller,
	// not once the requests are gone.
	for _, crr := range requestsOf(t, p) {
		if err := admin.Delete(context.Background(), &crr); err != nil {
			t.Fatal(err)
		}
	}
	c.clock.Step(3 * time.Hour)
	c.reconcile(t, p)
	fresh := newController(t, 0)
	fresh.clock.SetTime(c.clock.Now())
	fresh.reconcile(t, p)
	if n := len(requestsOf(t, p)); n != 0 {
		t.Fatalf("%d requests after the restart was done, want none", n)
	}

	// A later restartAt asks for another restart.
	again := getPolicy(t, p)
	again.Spec.RestartAt = &metav1.Time{Time: c.clock.Now().Add(-time.Second).Truncate(time.Second)}
	if err := admin.Update(context.Background(), again); err != nil {
		t.Fatal(err)
	}
	if rolled := roll(t, c, p); rolled.requests != 3 {
		t.Errorf("the second restart made %d requests, want 3", rolled.requests)
	}
}

// TestRestartAtWhileARunGoes: a restart requested while the schedule's run
// is going is not started, and the policy says why; it counts as handled.
func TestRestartAtWhileARunGoes(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	createPods(t, ns, "api", 2, c.clock.Now().Add(-time.Hour))
	p := createPolicy(t, ns, "nightly", v1alpha1.RecreatePolicySpec{
		Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}},
		Schedule: &v1alpha1.Schedule{Cron: "*/5 * * * *"},
		Rollout:  v1alpha1.Rollout{MaxUnavailable: new(intstr.FromInt32(1))},
	})
	c.clock.SetTime(c.clock.Now().Truncate(5 * time.Minute).Add(5*time.Minute + time.Second))
	c.reconcile(t, p)
	if n := len(requestsOf(t, p)); n != 1 {
		t.Fatalf("%d requests in the scheduled run's first batch, want 1", n)
	}
	requested := getPolicy(t, p)
	at := c.clock.Now().Truncate(time.Second)
	requested.Spec.RestartAt = &metav1.Time{Time: at}
	if err := admin.Update(context.Background(), requested); err != nil {
		t.Fatal(err)
	}
	c.clock.Step(time.Second)
	c.reconcile(t, p)
	status := getPolicy(t, p).Status
	if status.Run == nil || status.Run.Requested {
		t.Errorf("run %+v, want the scheduled run still", status.Run)
	}
	if status.RestartedAt == nil || !status.RestartedAt.Time.Equal(at) {
		t.Errorf("restartedAt %v, want %s (handled)", status.RestartedAt, at.UTC())
	}
	said := false
	for _, d := range status.RecentDecisions {
		said = said || d.Trigger == "restart" && d.Outcome == v1alpha1.OutcomeSkipped && strings.Contains(d.Message, "is still going")
	}
	if !said {
		t.Errorf("no Skipped decision for the requested restart: %+v", status.RecentDecisions)
	}
}

type rolledOut struct{ requests, maxInFlight int }

// roll reconciles the policy and completes its requests as the daemon and
// kubelet would, until none is in flight.
func roll(t *testing.T, c *testReconciler, p *v1alpha1.RecreatePolicy) rolledOut {
	t.Helper()
	var out rolledOut
	for range 10 {
		c.reconcile(t, p)
		crrs := requestsOf(t, p)
		out.maxInFlight = max(out.maxInFlight, inFlight(crrs))
		if inFlight(crrs) == 0 {
			out.requests = len(crrs)
			return out
		}
		c.clock.Step(20 * time.Second)
		for i := range crrs {
			if crrs[i].Status.Phase == "" {
				complete(t, c, &crrs[i], true)
			}
		}
	}
	t.Fatal("the run did not end in 10 passes")
	return out
}
