package recreatepolicy

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// TestScheduledRollingRun: a run restarts six pods two at a time, each
// exactly once, the next batch only when the previous one is done and
// Ready, and the status shows the next run in the schedule's time zone.
func TestScheduledRollingRun(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	createPods(t, ns, "web", 6, c.clock.Now().Add(-time.Hour))
	p := createPolicy(t, ns, "nightly", v1alpha1.RecreatePolicySpec{
		Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Schedule: &v1alpha1.Schedule{Cron: "0 3 * * *", TimeZone: "Europe/Berlin"},
		Rollout:  v1alpha1.Rollout{MaxUnavailable: new(intstr.FromInt32(2))},
	})

	c.reconcile(t, p)
	status := getPolicy(t, p).Status
	berlin, _ := time.LoadLocation("Europe/Berlin")
	local := c.clock.Now().In(berlin)
	fire := time.Date(local.Year(), local.Month(), local.Day(), 3, 0, 0, 0, berlin)
	if !fire.After(c.clock.Now()) {
		fire = fire.AddDate(0, 0, 1)
	}
	if status.NextScheduleTime == nil || !status.NextScheduleTime.Equal(&metav1.Time{Time: fire}) {
		t.Fatalf("nextScheduleTime %v, want %s (03:00 in Berlin)", status.NextScheduleTime, fire.UTC())
	}
	if n := len(requestsOf(t, p)); n != 0 {
		t.Fatalf("%d requests before the first run", n)
	}

	c.clock.SetTime(fire.Add(10 * time.Second))
	maxInFlight := 0
	for range 10 {
		c.reconcile(t, p)
		crrs := requestsOf(t, p)
		maxInFlight = max(maxInFlight, inFlight(crrs))
		if inFlight(crrs) == 0 {
			break
		}
		c.clock.Step(20 * time.Second)
		for i := range crrs {
			if crrs[i].Status.Phase == "" {
				complete(t, c, &crrs[i], true)
			}
		}
	}
	crrs := requestsOf(t, p)
	if len(crrs) != 6 || maxInFlight != 2 {
		t.Fatalf("%d requests, at most %d in flight; want 6 requests, 2 at a time", len(crrs), maxInFlight)
	}
	perPod := map[string]int{}
	for _, crr := range crrs {
		perPod[crr.Spec.PodName]++
		if crr.Labels["rejuv.dev/trigger"] != "schedule" || crr.Annotations["rejuv.dev/run"] != fire.UTC().Format(time.RFC3339) {
			t.Errorf("request %s: labels %v annotations %v", crr.Name, crr.Labels, crr.Annotations)
		}
	}
	for pod, n := range perPod {
		if n != 1 {
			t.Errorf("pod %s recreated %d times in one run", pod, n)
		}
	}
	status = getPolicy(t, p).Status
	if status.Run == nil || status.Run.State != v1alpha1.RunCompleted || status.Run.Pods != 6 || status.Run.Recreated != 6 {
		t.Errorf("run %+v, want Completed with 6 of 6 pods", status.Run)
	}
	if want := fire.AddDate(0, 0, 1); status.NextScheduleTime == nil || !status.NextScheduleTime.Time.Equal(want) {
		t.Errorf("after the run, nextScheduleTime %v, want %s", status.NextScheduleTime, want.UTC())
	}
	held := false
	for _, d := range status.RecentDecisions {
		if d.Outcome == v1alpha1.OutcomeUnavailable {
			held = true
		}
	}
	if !held {
		t.Errorf("no decision shows a pod held back by maxUnavailable: %+v", status.RecentDecisions)
	}

	// The next reconcile within the same day starts nothing.
	c.clock.Step(time.Minute)
	c.reconcile(t, p)
	if n := len(requestsOf(t, p)); n != 6 {
		t.Errorf("%d requests after the run completed, want still 6", n)
	}
}

// TestMissedRunIsSkipped: a run missed by more than the starting deadline
// (the manager was down) is reported and not started.
func TestMissedRunIsSkipped(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	createPods(t, ns, "api", 2, c.clock.Now().Add(-time.Hour))
	p := createPolicy(t, ns, "hourly", v1alpha1.RecreatePolicySpec{
		Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}},
		Schedule: &v1alpha1.Schedule{Cron: "@hourly", StartingDeadlineSeconds: new(int64(60))},
	})
	c.clock.Step(2 * time.Hour)
	// Back within a minute of a fire time, the run starts; here it is not.
	if m := c.clock.Now().Minute(); m == 0 || m == 1 {
		c.clock.Step(5 * time.Minute)
	}
	c.reconcile(t, p)
	if n := len(requestsOf(t, p)); n != 0 {
		t.Fatalf("%d requests for a missed run", n)
	}
	status := getPolicy(t, p).Status
	if len(status.RecentDecisions) == 0 || status.RecentDecisions[0].Outcome != v1alpha1.OutcomeSkipped {
		t.Fatalf("decisions %+v, want a Skipped run first", status.RecentDecisions)
	}
	if status.Run != nil {
		t.Errorf("a run was recorded: %+v", status.Run)
	}
	if got := testutil.ToFloat64(missedRuns.WithLabelValues(p.Name, ns)); got != 1 {
		t.Errorf("rejuv_schedule_missed_runs_total is %v, want 1", got)
	}
}

// TestFailedRequestHaltsTheRun: a request of a run that fails halts the
// run and the policy says so; nothing more is started for that run.
func TestFailedRequestHaltsTheRun(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	createPods(t, ns, "db", 3, c.clock.Now().Add(-time.Hour))
	p := createPolicy(t, ns, "halting", v1alpha1.RecreatePolicySpec{
		Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
		Schedule: &v1alpha1.Schedule{Cron: "*/5 * * * *"},
		Rollout:  v1alpha1.Rollout{MaxUnavailable: new(intstr.FromInt32(1))},
	})
	c.clock.SetTime(c.clock.Now().Truncate(5 * time.Minute).Add(5*time.Minute + time.Second))
	c.reconcile(t, p)
	crrs := requestsOf(t, p)
	if len(crrs) != 1 {
		t.Fatalf("%d requests in the first batch, want 1", len(crrs))
	}
	failed(t, c, &crrs[0], "container app: not running 60s after its restart")
	c.clock.Step(10 * time.Second)
	c.reconcile(t, p)
	c.clock.Step(10 * time.Second)
	c.reconcile(t, p)
	status := getPolicy(t, p).Status
	if status.Run == nil || status.Run.State != v1alpha1.RunHalted || !strings.Contains(status.Run.Message, "not running 60s after its restart") {
		t.Errorf("run %+v, want Halted with the request's message", status.Run)
	}
	if c := meta.FindStatusCondition(status.Conditions, v1alpha1.ConditionHalted); c == nil || c.Status != metav1.ConditionTrue || c.Reason != v1alpha1.ReasonRunFailed {
		t.Errorf("Halted condition %+v, want True RunFailed", c)
	}
	if n := len(requestsOf(t, p)); n != 1 {
		t.Errorf("%d requests after the failure, want still 1", n)
	}
}

// TestRunSkipsPodsTheKubeletWouldNotRestart: a run leaves alone a pod whose
// containers the kubelet would not start again (restartPolicy Never), says
// so in a decision and counts it as skipped, not as recreated.
func TestRunSkipsPodsTheKubeletWouldNotRestart(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	createPods(t, ns, "batch", 1, c.clock.Now().Add(-time.Hour))
	once := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "once", Labels: map[string]string{"app": "batch"}},
		Spec:       corev1.PodSpec{NodeName: "node-a", RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "app", Image: "img"}}},
	}
	if err := admin.Create(context.Background(), once); err != nil {
		t.Fatal(err)
	}
	setPodStatus(t, once, true, "containerd://once-1", 0, c.clock.Now().Add(-time.Hour))
	p := createPolicy(t, ns, "nightly", v1alpha1.RecreatePolicySpec{
		Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "batch"}},
		Schedule: &v1alpha1.Schedule{Cron: "0 3 * * *"},
	})
	c.reconcile(t, p)
	c.clock.SetTime(getPolicy(t, p).Status.NextScheduleTime.Add(time.Second))
	for range 5 {
		c.reconcile(t, p)
		for _, crr := range requestsOf(t, p) {
			if crr.Status.Phase == "" {
				complete(t, c, &crr, true)
			}
		}
		c.clock.Step(10 * time.Second)
	}
	status := getPolicy(t, p).Status
	if status.Run == nil || status.Run.State != v1alpha1.RunCompleted || status.Run.Recreated != 1 || status.Run.Skipped != 1 {
		t.Errorf("run %+v, want Completed with 1 recreated and 1 skipped", status.Run)
	}
	for _, crr := range requestsOf(t, p) {
		if crr.Spec.PodName == "once" {
			t.Errorf("request %s for pod once, whose containers the kubelet would not start again", crr.Name)
		}
	}
	var said bool
	for _, d := range status.RecentDecisions {
		said = said || d.Pod == "once" && d.Outcome == v1alpha1.OutcomeSkipped && strings.Contains(d.Message, "spec.restartPolicy is Never: the kubelet would not start container app again")
	}
	if !said {
		t.Errorf("no Skipped decision for pod once naming its restartPolicy: %+v", status.RecentDecisions)
	}
}

// TestARunEndsOnlyOnceItsRequestsHave: a run whose pod is deleted while
// its request is in flight ends only once that request has, and counts
// it if it succeeded.
// Found by the soak: the daemon had recreated the pod and the request
// had succeeded, but the leader's cache of requests, back from an API
// server restart later than its cache of pods, still showed it in flight
// when the load deleted the pod: the run ended at once, "0 recreated".
func TestARunEndsOnlyOnceItsRequestsHave(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	pods := createPods(t, ns, "web", 2, c.clock.Now().Add(-time.Hour))
	p := createPolicy(t, ns, "rolling", v1alpha1.RecreatePolicySpec{
		Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Schedule: &v1alpha1.Schedule{Cron: "*/5 * * * *"},
		Rollout:  v1alpha1.Rollout{MaxUnavailable: new(intstr.FromInt32(2))},
	})
	// The first fire time after the policy's creation, whatever second
	// the real clock read then.
	c.clock.SetTime(getPolicy(t, p).CreationTimestamp.Truncate(5 * time.Minute).Add(5*time.Minute + time.Second))
	c.reconcile(t, p)
	crrs := requestsOf(t, p)
	if len(crrs) != 2 || inFlight(crrs) != 2 {
		t.Fatalf("%d requests, %d in flight; want both pods' in flight", len(crrs), inFlight(crrs))
	}
	byPod := map[string]*appsv1beta1.ContainerRecreateRequest{}
	for i := range crrs {
		// As the webhook does: the request names its pod's UID.
		crr := &crrs[i]
		for _, pod := range pods {
			if pod.Name == crr.Spec.PodName {
				crr.Labels[appsv1beta1.PodUIDLabel] = string(pod.UID)
			}
		}
		if err := admin.Update(context.Background(), crr); err != nil {
			t.Fatal(err)
		}
		byPod[crr.Spec.PodName] = crr
	}
	first, second := byPod[pods[0].Name], byPod[pods[1].Name]

	// The first pod is recreated; the second is deleted while its
	// request reads in flight.
	complete(t, c, first, true)
	c.clock.Step(5 * time.Second)
	c.reconcile(t, p)
	if err := admin.Delete(context.Background(), pods[1], client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	c.clock.Step(5 * time.Second)
	c.reconcile(t, p)
	run := getPolicy(t, p).Status.Run
	if run == nil || run.State != v1alpha1.RunRunning || run.Recreated != 1 {
		t.Fatalf("with the deleted pod's request in flight: run %+v, want Running with 1 recreated", run)
	}

	// Its request ends: it had recreated the pod before the deletion.
	second.Status = appsv1beta1.ContainerRecreateRequestStatus{
		Phase: appsv1beta1.PhaseCompleted, Result: appsv1beta1.ResultSucceeded, CompletionTime: &metav1.Time{Time: c.clock.Now()},
		ContainerRecreateStates: []appsv1beta1.ContainerRecreateRequestContainerRecreateState{{Name: "app", Phase: appsv1beta1.PhaseSucceeded}},
	}
	if err := admin.Status().Update(context.Background(), second); err != nil {
		t.Fatal(err)
	}
	c.clock.Step(5 * time.Second)
	c.reconcile(t, p)
	run = getPolicy(t, p).Status.Run
	if run == nil || run.State != v1alpha1.RunCompleted || run.Recreated != 2 {
		t.Errorf("run %+v, want Completed with 2 recreated", run)
	}
}
