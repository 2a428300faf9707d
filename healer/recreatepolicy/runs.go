package recreatepolicy

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/planner"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
)

// runs fires the schedule and the restart requested by restartAt, and
// carries the current run on. It returns how long until the next fire time
// or requested restart, zero for none.
func (r *Reconciler) runs(ctx context.Context, p *v1alpha1.RecreatePolicy, spec *policyspec.Spec, pods []*corev1.Pod, facts *requestFacts, s *planner.Situation, d *decider, now time.Time) (time.Duration, error) {
	var wait time.Duration
	started := false
	if spec.Schedule != nil {
		wait, started = r.fireSchedule(p, spec.Schedule, pods, d, now)
	}
	if at := p.Spec.RestartAt; at != nil {
		w, ok := r.fireRestart(p, at.Time, pods, d, now)
		started = started || ok
		if w > 0 && (wait == 0 || w < wait) {
			wait = w
		}
	}
	run := p.Status.Run
	if run == nil || run.State != v1alpha1.RunRunning {
		return wait, nil
	}
	at := run.ScheduledTime.Time
	trigger := planner.Trigger{Kind: planner.TriggerSchedule, Run: at, Requested: run.Requested}
	prog := progress(trigger, pods, spec.Containers, facts.runs[at.UTC().Format(time.RFC3339)], run.Baseline)
	run.Recreated, run.UpToDate, run.Skipped = int32(prog.recreated), int32(len(prog.upToDate)), int32(len(prog.skipped))
	if started {
		for _, c := range prog.leftAlone {
			d.skipped(c, unrestartableMessage(c.Pod, c.Containers))
		}
	}
	for _, c := range prog.upToDate {
		d.upToDate(c)
	}
	switch {
	case prog.failed != nil && p.Spec.Rollout.OnFailure != v1alpha1.RolloutContinue:
		msg := fmt.Sprintf("ContainerRecreateRequest %s for pod %s ended %s: %s", prog.failed.Name, prog.failed.Spec.PodName, prog.failed.Status.Result, prog.failed.Status.Message)
		run.State, run.Message, run.CompletionTime = v1alpha1.RunHalted, msg, &metav1.Time{Time: now}
		r.halt(p, v1alpha1.ReasonRunFailed, "the "+runName(run)+" halted: "+msg)
	case len(prog.pending) == 0 && !anyInFlight(pods, facts):
		run.State, run.CompletionTime = v1alpha1.RunCompleted, &metav1.Time{Time: now}
		r.Recorder.Eventf(p, nil, corev1.EventTypeNormal, "RunCompleted", "Run", "rolling restart of %s done: %d pods recreated, %d up to date (started again since the run began), %d skipped", at.UTC().Format(time.RFC3339), prog.recreated, len(prog.upToDate), len(prog.skipped))
	default:
		if err := d.decideAll(ctx, s, prog.pending); err != nil {
			return 0, err
		}
		// Pods left are looked at again whatever the events: a missed
		// one (a budget's status written while the manager changed
		// leader) must not leave the run waiting.
		if wait == 0 || wait > runRecheck {
			wait = runRecheck
		}
	}
	return wait, nil
}

// runRecheck is how often a run that has pods left is looked at again,
// whatever the events.
const runRecheck = 5 * time.Second

// fireSchedule starts the run the schedule has due, or reports why it
// does not; it returns how long until the next fire time and whether a
// run started.
func (r *Reconciler) fireSchedule(p *v1alpha1.RecreatePolicy, sched *policyspec.Schedule, pods []*corev1.Pod, d *decider, now time.Time) (time.Duration, bool) {
	since := p.CreationTimestamp.Time
	if last := p.Status.LastScheduleTime; last != nil {
		since = last.Time
	}
	t := schedule(sched, since, now)
	p.Status.NextScheduleTime = &metav1.Time{Time: t.next}
	nextRun.WithLabelValues(p.Name, p.Namespace).Set(float64(t.next.Unix()))
	missedRuns.WithLabelValues(p.Name, p.Namespace)
	wait := max(t.next.Sub(now), time.Second)
	trigger := planner.Trigger{Kind: planner.TriggerSchedule}
	if !t.missed.IsZero() {
		missedRuns.WithLabelValues(p.Name, p.Namespace).Inc()
		d.note(trigger, v1alpha1.OutcomeSkipped, fmt.Sprintf("run of %s missed by more than startingDeadlineSeconds", t.missed.UTC().Format(time.RFC3339)))
		p.Status.LastScheduleTime = &metav1.Time{Time: t.missed}
	}
	if t.due.IsZero() {
		return wait, false
	}
	p.Status.LastScheduleTime = &metav1.Time{Time: t.due}
	run := &v1alpha1.Run{ScheduledTime: metav1.NewTime(t.due)}
	if !r.startRun(p, run, pods, d) {
		return wait, false
	}
	r.Recorder.Eventf(p, nil, corev1.EventTypeNormal, "RunStarted", "Run", "rolling restart of %d pods (schedule %s)", len(pods), t.due.UTC().Format(time.RFC3339))
	return wait, true
}

// fireRestart starts the run restartAt requests once its time has come
// and it was not handled before, or reports why it does not; it returns
// how long until that time, zero once it has come, and whether a run
// started.
func (r *Reconciler) fireRestart(p *v1alpha1.RecreatePolicy, at time.Time, pods []*corev1.Pod, d *decider, now time.Time) (time.Duration, bool) {
	if done := p.Status.RestartedAt; done != nil && !at.After(done.Time) {
		return 0, false
	}
	if at.After(now) {
		return at.Sub(now), false
	}
	p.Status.RestartedAt = &metav1.Time{Time: at}
	run := &v1alpha1.Run{ScheduledTime: metav1.NewTime(at), Requested: true}
	if !r.startRun(p, run, pods, d) {
		return 0, false
	}
	r.Recorder.Eventf(p, nil, corev1.EventTypeNormal, "RunStarted", "Run", "rolling restart of %d pods (restart requested for %s)", len(pods), at.UTC().Format(time.RFC3339))
	return 0, true
}

// startRun makes run the policy's current run, with what it sees of the
// pods as its baseline, unless the policy is suspended or another run is
// going: then it records why not.
func (r *Reconciler) startRun(p *v1alpha1.RecreatePolicy, run *v1alpha1.Run, pods []*corev1.Pod, d *decider) bool {
	trigger := planner.Trigger{Kind: planner.TriggerSchedule, Run: run.ScheduledTime.Time, Requested: run.Requested}
	switch current := p.Status.Run; {
	case p.Spec.Suspend:
		d.note(trigger, v1alpha1.OutcomeSuspended, runName(run)+" not started: the policy is suspended")
		return false
	case current != nil && current.State == v1alpha1.RunRunning:
		d.note(trigger, v1alpha1.OutcomeSkipped, runName(run)+" not started: the "+runName(current)+" is still going")
		return false
	}
	run.State, run.Pods, run.Baseline = v1alpha1.RunRunning, int32(len(pods)), baselineOf(pods)
	p.Status.Run = run
	r.unhaltFor(p, v1alpha1.ReasonRunFailed)
	return true
}

// runName names a run in messages: "run of T" for a scheduled one,
// "restart requested for T" for one restartAt asked for.
func runName(run *v1alpha1.Run) string {
	at := run.ScheduledTime.UTC().Format(time.RFC3339)
	if run.Requested {
		return "restart requested for " + at
	}
	return "run of " + at
}

func anyInFlight(pods []*corev1.Pod, facts *requestFacts) bool {
	for _, pod := range pods {
		if facts.inFlight[pod.UID] {
			return true
		}
	}
	return false
}
