package recreatepolicy

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// TestRunOfPodsStartedInItsSecond plays the restart a user asks for right
// after a rollout: the pods' containers started in the very second of
// restartAt (their startedAt reads that second, as the run's time does).
// Every pod is still recreated by a request of the run, one at a time,
// across passes and a new controller that takes over in the middle; a pod
// whose container the kubelet starts again on its own during the run is
// up to date, not recreated; a pod created during the run is not part of
// it.
func TestRunOfPodsStartedInItsSecond(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	at := c.clock.Now().Add(time.Minute).Truncate(time.Second)
	pods := createPods(t, ns, "web", 4, at.Add(400*time.Millisecond))
	p := createPolicy(t, ns, "restart-deployment-web", v1alpha1.RecreatePolicySpec{
		Selector:  metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		RestartAt: &metav1.Time{Time: at},
		Rollout:   v1alpha1.Rollout{MaxUnavailable: new(intstr.FromInt32(1))},
	})
	c.clock.SetTime(at.Add(600 * time.Millisecond))
	c.reconcile(t, p)
	run := getPolicy(t, p).Status.Run
	// The premise: the run began in the second the containers started.
	if run == nil || run.State != v1alpha1.RunRunning || !run.ScheduledTime.Time.Equal(at) || len(run.Baseline) != 4 {
		t.Fatalf("run %+v, want one running since %s with 4 pods in its baseline", run, at)
	}
	if n := len(requestsOf(t, p)); n != 1 {
		t.Fatalf("%d requests in the first pass, want 1 (maxUnavailable 1)", n)
	}
	first := requestsOf(t, p)[0].Spec.PodName

	// web-3 crashes and the kubelet starts it again: up to date. A pod
	// created now is not the run's.
	var crashed string
	for _, pod := range pods {
		if pod.Name != first {
			crashed = pod.Name
			break
		}
	}
	restarted(t, c, ns, crashed, true)
	createPods(t, ns, "web-late", 1, c.clock.Now())
	late := getPolicy(t, p)
	late.Spec.Selector = metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web", "web-late"}}}}
	if err := admin.Update(t.Context(), late); err != nil {
		t.Fatal(err)
	}

	// A new controller carries the run on from the status.
	c = newController(t, 0)
	c.clock.SetTime(at.Add(time.Second))
	rolled := roll(t, c, p)
	run = getPolicy(t, p).Status.Run
	if rolled.requests != 3 || rolled.maxInFlight != 1 {
		t.Errorf("%d requests, at most %d in flight; want 3 (every pod but the crashed one), one at a time", rolled.requests, rolled.maxInFlight)
	}
	if run.State != v1alpha1.RunCompleted || run.Pods != 4 || run.Recreated != 3 || run.UpToDate != 1 || run.Skipped != 0 {
		t.Errorf("run %s: %d pods, %d recreated, %d up to date, %d skipped; want Completed: 4, 3, 1, 0", run.State, run.Pods, run.Recreated, run.UpToDate, run.Skipped)
	}
	for _, crr := range requestsOf(t, p) {
		if crr.Spec.PodName == crashed || crr.Spec.PodName == "web-late-0" {
			t.Errorf("request %s for pod %s, which needed none", crr.Name, crr.Spec.PodName)
		}
	}
	// The up-to-date pod has its own decision, once across the passes and
	// the new controller, with the run's reason.
	var upToDate []v1alpha1.Decision
	for _, d := range getPolicy(t, p).Status.RecentDecisions {
		if d.Outcome == v1alpha1.OutcomeUpToDate {
			upToDate = append(upToDate, d)
		}
	}
	if len(upToDate) != 1 || upToDate[0].Pod != crashed || !strings.Contains(upToDate[0].Reason, at.UTC().Format(time.RFC3339)) {
		t.Errorf("up-to-date decisions %+v, want one for %s naming the run of %s", upToDate, crashed, at.UTC().Format(time.RFC3339))
	}
}
