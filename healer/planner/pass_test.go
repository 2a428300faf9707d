package planner

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
	"github.com/rejuv-dev/rejuv/policy/policytest"
)

// runPod is a running, Ready pod of app web in namespace shop, its
// container app started an hour before now.
func runPod(name string, now time.Time) corev1.Pod {
	return *policytest.ReadyPod(name, strings.Repeat(name[len(name)-1:], 16), now.Add(-time.Hour))
}

// runPolicy is a policy of namespace shop over app web.
func runPolicy(spec v1alpha1.RecreatePolicySpec) *v1alpha1.RecreatePolicy {
	spec.Selector = metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	return &v1alpha1.RecreatePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "heal", UID: "heal-uid", Generation: 1,
			CreationTimestamp: metav1.NewTime(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))},
		Spec: spec,
	}
}

// inputOf is what a pass over pods at now reads, with no request.
func inputOf(t *testing.T, p *v1alpha1.RecreatePolicy, pods []corev1.Pod, now time.Time) *Input {
	t.Helper()
	spec, errs := policyspec.Parse(&p.Spec)
	if len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	return InputOf(p, spec, pods, nil, nil, now)
}

// outcomes are a section's decisions, "POD OUTCOME" each.
func outcomes(sec Section) []string {
	var out []string
	for _, e := range sec.Decisions {
		out = append(out, e.Decision.Pod+" "+string(e.Decision.Outcome))
	}
	return out
}

// TestPlanStartsAScheduledRun: a schedule due now starts a run over the
// selected pods, with a RunStarted event and every pod a pending
// decision admitted as far as maxUnavailable allows; a run with pods left
// is looked at again within RunRecheck.
func TestPlanStartsAScheduledRun(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	p := runPolicy(v1alpha1.RecreatePolicySpec{
		Schedule: &v1alpha1.Schedule{Cron: "0 12 * * *", TimeZone: "UTC"},
		Rollout:  v1alpha1.Rollout{MaxUnavailable: new(intstr.FromInt32(1))},
	})
	p.Status.LastScheduleTime = &metav1.Time{Time: now.Add(-24 * time.Hour)}
	pods := []corev1.Pod{runPod("web-a", now), runPod("web-b", now)}
	pl := Pass(p, inputOf(t, p, pods, now), false, nil)
	run := p.Status.Run
	if run == nil || run.State != v1alpha1.RunRunning || !run.ScheduledTime.Time.Equal(now) || run.Pods != 2 || len(run.Baseline) != 2 {
		t.Fatalf("run %+v, want one running at %s over 2 pods with their baseline", run, now)
	}
	if len(pl.Runs.Events) != 1 || pl.Runs.Events[0].Reason != "RunStarted" {
		t.Errorf("events %+v, want one RunStarted", pl.Runs.Events)
	}
	want := []string{"web-a Created", "web-b Unavailable"}
	if got := outcomes(pl.Runs); !slices.Equal(got, want) {
		t.Errorf("run decisions %v, want %v", got, want)
	}
	if pl.Requeue != RunRecheck || !pl.NextRun.Equal(now.Add(24*time.Hour)) {
		t.Errorf("requeue %s, next run %s; want %s, %s", pl.Requeue, pl.NextRun, RunRecheck, now.Add(24*time.Hour))
	}
}

// TestPlanSaysAPodUpToDateOncePerRun: a run's pod started again since the
// run began, by something else, is decided UpToDate at the first pass
// only; the passes after find that decision in the status.
func TestPlanSaysAPodUpToDateOncePerRun(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	p := runPolicy(v1alpha1.RecreatePolicySpec{})
	before := []corev1.Pod{runPod("web-a", now), runPod("web-b", now)}
	var baselinePods []*corev1.Pod
	for i := range before {
		baselinePods = append(baselinePods, &before[i])
	}
	at := now.Add(-time.Minute)
	p.Spec.RestartAt, p.Status.RestartedAt = &metav1.Time{Time: at}, &metav1.Time{Time: at}
	p.Status.Run = &v1alpha1.Run{State: v1alpha1.RunRunning, ScheduledTime: metav1.NewTime(at), Requested: true, Pods: 2, Baseline: BaselineOf(baselinePods)}
	restarted := runPod("web-b", now)
	restarted.Status.ContainerStatuses[0].RestartCount = 1
	restarted.Status.ContainerStatuses[0].ContainerID = "containerd://bbbbbbbbbbbb0002"
	pods := []corev1.Pod{before[0], restarted}
	pl := Pass(p, inputOf(t, p, pods, now), false, nil)
	want := []string{"web-b UpToDate", "web-a Created"}
	if got := outcomes(pl.Runs); !slices.Equal(got, want) {
		t.Fatalf("run decisions %v, want %v", got, want)
	}
	// The controller writes the pass's decisions into the status.
	p.Status.RecentDecisions = pl.Decisions()
	next := Pass(p, inputOf(t, p, pods, now.Add(time.Second)), false, nil)
	if got := outcomes(next.Runs); !slices.Equal(got, []string{"web-a Created"}) {
		t.Errorf("next pass's run decisions %v, want only web-a Created", got)
	}
}
