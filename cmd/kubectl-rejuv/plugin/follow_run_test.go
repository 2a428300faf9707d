package plugin

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/planner"
)

// TestRunFollowerLines: a restart followed from its request to its end
// gives one line per event, each said once, a hold by each gate once per
// pod, and a summary; a halted restart fails.
func TestRunFollowerLines(t *testing.T) {
	at := now
	clock := at
	var out bytes.Buffer
	f := &runFollower{p: newProgress(&out, false, "deployment/web", func() time.Time { return clock }), at: at,
		requests: map[string]v1beta1.ContainerRecreateRequestPhase{}, holds: map[string]map[v1alpha1.DecisionOutcome]bool{}, backedOff: map[string]bool{}}
	p := &v1alpha1.RecreatePolicy{}
	req := func(name, pod string, phase v1beta1.ContainerRecreateRequestPhase, result v1beta1.ContainerRecreateRequestResult, took time.Duration) v1beta1.ContainerRecreateRequest {
		r := v1beta1.ContainerRecreateRequest{
			ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(at)},
			Spec:       v1beta1.ContainerRecreateRequestSpec{PodName: pod, Containers: []v1beta1.ContainerRecreateRequestContainer{{Name: "app"}}},
			Status:     v1beta1.ContainerRecreateRequestStatus{Phase: phase, Result: result},
		}
		if phase == v1beta1.PhaseCompleted {
			r.Status.CompletionTime = &metav1.Time{Time: at.Add(took)}
			r.Status.Message = "container app: not ready 60s after its restart"
		}
		return r
	}
	// A container the kubelet holds in its restart back-off: said once.
	backingOff := req("r-1", "web-1", v1beta1.PhaseRecreating, "", 0)
	backingOff.Status.ContainerRecreateStates = []v1beta1.ContainerRecreateRequestContainerRecreateState{{Name: "app", Phase: v1beta1.PhaseRecreating, IsKilled: true,
		Message: v1beta1.BackOffMessage + "back-off 10s restarting failed container=app pod=web-1_shop(u1)"}}
	reason := "rolling restart requested for " + at.UTC().Format(time.RFC3339)
	hold := func(pod string, outcome v1alpha1.DecisionOutcome, msg string) v1alpha1.Decision {
		return v1alpha1.Decision{Time: metav1.NewTime(at.Add(time.Second)), Pod: pod, Trigger: "restart", Outcome: outcome, Reason: reason, Message: msg}
	}
	// A hold of the restart before, decided in the same second as this
	// one's time: its reason names the earlier run, and it is not said.
	earlier := v1alpha1.Decision{Time: metav1.NewTime(at), Pod: "web-2", Trigger: "restart", Outcome: v1alpha1.OutcomeCooldown,
		Reason: "rolling restart requested for " + at.Add(-time.Hour).UTC().Format(time.RFC3339), Message: "of the restart before"}
	steps := []struct {
		after    time.Duration
		run      *v1alpha1.Run
		requests []v1beta1.ContainerRecreateRequest
		holds    []v1alpha1.Decision
	}{
		{after: 0},
		{after: 25 * time.Second},
		{after: 26 * time.Second, run: &v1alpha1.Run{ScheduledTime: metav1.NewTime(at), Requested: true, State: v1alpha1.RunRunning, Pods: 3},
			requests: []v1beta1.ContainerRecreateRequest{req("r-0", "web-0", "", "", 0)},
			holds: []v1alpha1.Decision{hold("web-1", v1alpha1.OutcomeUnavailable, "1 of 3 selected pods unavailable"), hold("web-2", v1alpha1.OutcomeDisruptionBudget, "PodDisruptionBudget web allows no disruption now"), earlier,
				{Time: metav1.NewTime(at), Pod: "web-0", Containers: []string{"log"}, Trigger: "restart", Outcome: v1alpha1.OutcomeSkipped, Reason: reason,
					Message: "spec.containers[1].restartPolicy is Never: the kubelet would not start container log again once stopped"}}},
		{after: 27 * time.Second, run: &v1alpha1.Run{ScheduledTime: metav1.NewTime(at), Requested: true, State: v1alpha1.RunRunning, Pods: 3},
			requests: []v1beta1.ContainerRecreateRequest{req("r-0", "web-0", v1beta1.PhaseRecreating, "", 0)},
			holds:    []v1alpha1.Decision{hold("web-1", v1alpha1.OutcomeDisruptionBudget, "PodDisruptionBudget web allows no disruption now"), hold("web-1", v1alpha1.OutcomeUnavailable, "1 of 3 selected pods unavailable")}},
		{after: 29 * time.Second, run: &v1alpha1.Run{ScheduledTime: metav1.NewTime(at), Requested: true, State: v1alpha1.RunRunning, Pods: 3, Recreated: 1},
			requests: []v1beta1.ContainerRecreateRequest{req("r-0", "web-0", v1beta1.PhaseCompleted, v1beta1.ResultSucceeded, 4*time.Second), req("r-1", "web-1", "", "", 0)}},
		{after: 40 * time.Second, run: &v1alpha1.Run{ScheduledTime: metav1.NewTime(at), Requested: true, State: v1alpha1.RunRunning, Pods: 3, Recreated: 1},
			requests: []v1beta1.ContainerRecreateRequest{req("r-0", "web-0", v1beta1.PhaseCompleted, v1beta1.ResultSucceeded, 4*time.Second), backingOff}},
		{after: 50 * time.Second, run: &v1alpha1.Run{ScheduledTime: metav1.NewTime(at), Requested: true, State: v1alpha1.RunRunning, Pods: 3, Recreated: 1},
			requests: []v1beta1.ContainerRecreateRequest{req("r-0", "web-0", v1beta1.PhaseCompleted, v1beta1.ResultSucceeded, 4*time.Second), backingOff}},
		{after: 95 * time.Second, run: &v1alpha1.Run{ScheduledTime: metav1.NewTime(at), Requested: true, State: v1alpha1.RunHalted, Pods: 3, Recreated: 1,
			Message: "ContainerRecreateRequest r-1 for pod web-1 ended Failed: container app: not ready 60s after its restart"},
			requests: []v1beta1.ContainerRecreateRequest{req("r-0", "web-0", v1beta1.PhaseCompleted, v1beta1.ResultSucceeded, 4*time.Second), req("r-1", "web-1", v1beta1.PhaseCompleted, v1beta1.ResultFailed, 70*time.Second)}},
	}
	var err error
	var done bool
	for i, s := range steps {
		clock = at.Add(s.after)
		p.Status.Run, p.Status.RecentDecisions = s.run, s.holds
		done, err = f.step(p, s.requests)
		if done != (i == len(steps)-1) {
			t.Fatalf("step %d: done %v", i, done)
		}
	}
	if _, failed := errors.AsType[*FailedError](err); !failed {
		t.Errorf("a halted restart gave %v, want a FailedError", err)
	}
	golden(t, "follow-run.txt", out.Bytes())
}

// TestProgressBar: on a terminal the bar is drawn below the event lines
// and erased before each of them.
func TestProgressBar(t *testing.T) {
	var out bytes.Buffer
	clock := now
	p := newProgress(&out, true, "deployment/web", func() time.Time { return clock })
	p.counts(0, 4, 1, 0)
	clock = clock.Add(3 * time.Second)
	p.event("pod web-0: recreated in 3s")
	p.counts(1, 4, 1, 0)
	p.finish()
	golden(t, "progress-bar.txt", out.Bytes())
}

// TestFollowerSaysEachRunDecisionOnce: the follower prints a line for a
// pod the run finds up to date and for one it leaves alone, once each
// however often the policy is read, and none for an earlier run's
// decisions, told apart by their reason.
func TestFollowerSaysEachRunDecisionOnce(t *testing.T) {
	at := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
	reason := planner.Trigger{Kind: planner.TriggerSchedule, Run: at, Requested: true}.RunReason()
	earlier := planner.Trigger{Kind: planner.TriggerSchedule, Run: at.Add(-time.Hour), Requested: true}.RunReason()
	var out bytes.Buffer
	now := func() time.Time { return at }
	f := &runFollower{p: newProgress(&out, false, "deployment/web", now), at: at, holds: map[string]map[v1alpha1.DecisionOutcome]bool{}, backedOff: map[string]bool{}}
	p := &v1alpha1.RecreatePolicy{Status: v1alpha1.RecreatePolicyStatus{RecentDecisions: []v1alpha1.Decision{
		{Time: metav1.NewTime(at), Pod: "web-1", Containers: []string{"app"}, Trigger: planner.Restart, Outcome: v1alpha1.OutcomeUpToDate, Reason: reason, Message: "started again since the run began, by something other than the run: nothing to recreate"},
		{Time: metav1.NewTime(at), Pod: "web-2", Containers: []string{"job"}, Trigger: planner.Restart, Outcome: v1alpha1.OutcomeSkipped, Reason: reason, Message: "the kubelet would not start it again"},
		{Time: metav1.NewTime(at), Pod: "web-3", Containers: []string{"app"}, Trigger: planner.Restart, Outcome: v1alpha1.OutcomeUpToDate, Reason: earlier, Message: "an earlier run's"},
	}}}
	f.holdEvents(p)
	f.holdEvents(p)
	got := out.String()
	for _, want := range []string{
		"pod web-1: up to date: started again since the run began, by something other than the run: nothing to recreate",
		"pod web-2: job left alone: the kubelet would not start it again",
	} {
		if strings.Count(got, want) != 1 {
			t.Errorf("want once %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "web-3") {
		t.Errorf("an earlier run's decision was printed:\n%s", got)
	}
}
