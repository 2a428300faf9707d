package planner

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
)

// fireRuns plans the schedule's run and the restart requested by
// restartAt, and carries the current run on. It returns how long until
// the next fire time or requested restart, or until a run with pods left
// is looked at again; zero for none.
func (pl *Plan) fireRuns() time.Duration {
	p, spec := pl.Policy, pl.In.Spec
	var wait time.Duration
	started := false
	if spec.Schedule != nil {
		wait, started = pl.fireSchedule(spec.Schedule)
	}
	if at := p.Spec.RestartAt; at != nil {
		w, ok := pl.fireRestart(at.Time)
		started = started || ok
		if w > 0 && (wait == 0 || w < wait) {
			wait = w
		}
	}
	run := p.Status.Run
	if run == nil || run.State != v1alpha1.RunRunning {
		return wait
	}
	if pl.CarryRun(run, pl.In.Facts.Runs[run.ScheduledTime.UTC().Format(time.RFC3339)], started) && (wait == 0 || wait > RunRecheck) {
		// Pods left are looked at again whatever the events: a missed
		// one (a budget's status written while the manager changed
		// leader) must not leave the run waiting.
		wait = RunRecheck
	}
	return wait
}

// CarryRun carries a running run on, given its requests by pod UID:
// its counts, the pods it leaves alone (said once, at the pass it
// started), those started again since it began, and the gates' decision
// on each pod left; or its end, halted by a failed request or complete.
// It returns whether pods are left.
func (pl *Plan) CarryRun(run *v1alpha1.Run, requests map[types.UID]*appsv1beta1.ContainerRecreateRequest, started bool) bool {
	p, sec, now := pl.Policy, &pl.Runs, pl.In.Now
	at := run.ScheduledTime.Time
	trigger := Trigger{Kind: TriggerSchedule, Run: at, Requested: run.Requested}
	prog := Progress(trigger, pl.In.Pods, pl.In.Spec.Containers, requests, run.Baseline, pl.In.Facts.MadeBy)
	run.Recreated, run.UpToDate, run.Skipped = int32(prog.Recreated), int32(len(prog.UpToDate)), int32(len(prog.Skipped))
	if started {
		for _, c := range prog.LeftAlone {
			pl.outside(sec, c, v1alpha1.OutcomeSkipped, UnrestartableMessage(c.Pod, c.Containers))
		}
	}
	for _, c := range prog.UpToDate {
		pl.upToDate(c)
	}
	switch {
	case prog.Failed != nil && p.Spec.Rollout.OnFailure != v1alpha1.RolloutContinue:
		msg := fmt.Sprintf("ContainerRecreateRequest %s for pod %s ended %s: %s", prog.Failed.Name, prog.Failed.Spec.PodName, prog.Failed.Status.Result, prog.Failed.Status.Message)
		run.State, run.Message, run.CompletionTime = v1alpha1.RunHalted, v1alpha1.Truncate(msg, v1alpha1.MaxReasonLength), &metav1.Time{Time: now}
		pl.halt(sec, v1alpha1.ReasonRunFailed, "the "+runName(run)+" halted: "+msg)
		return false
	case len(prog.Pending) == 0 && !anyInFlight(pl.In.Pods, pl.In.Facts) && !anyActive(requests):
		run.State, run.CompletionTime = v1alpha1.RunCompleted, &metav1.Time{Time: now}
		sec.Events = append(sec.Events, PolicyEvent{corev1.EventTypeNormal, "RunCompleted", "Run",
			fmt.Sprintf("rolling restart of %s done: %d pods recreated, %d up to date (started again since the run began), %d skipped", at.UTC().Format(time.RFC3339), prog.Recreated, len(prog.UpToDate), len(prog.Skipped))})
		return false
	}
	for _, c := range prog.Pending {
		pl.admit(sec, c)
	}
	return true
}

// RunRecheck is how often a run that has pods left is looked at again,
// whatever the events.
const RunRecheck = 5 * time.Second

// upToDate decides, once per pod and run, that a run's pod needs nothing:
// its containers were started again since the run began.
func (pl *Plan) upToDate(c *PodCandidate) {
	said := func(d v1alpha1.Decision) bool {
		return d.Pod == c.Pod.Name && d.Reason == c.Reason && d.Outcome == v1alpha1.OutcomeUpToDate
	}
	for _, sec := range []*Section{&pl.Rules, &pl.Runs} {
		if slices.ContainsFunc(sec.Decisions, func(e Planned) bool { return said(e.Decision) }) {
			return
		}
	}
	if slices.ContainsFunc(pl.Policy.Status.RecentDecisions, said) {
		return
	}
	pl.outside(&pl.Runs, c, v1alpha1.OutcomeUpToDate, "started again since the run began, by something other than the run: nothing to recreate")
}

// fireSchedule starts the run the schedule has due, or says why it does
// not; it returns how long until the next fire time and whether a run
// started.
func (pl *Plan) fireSchedule(sched *policyspec.Schedule) (time.Duration, bool) {
	p, now := pl.Policy, pl.In.Now
	since := p.CreationTimestamp.Time
	if last := p.Status.LastScheduleTime; last != nil {
		since = last.Time
	}
	t := TickAt(sched, since, now)
	p.Status.NextScheduleTime = &metav1.Time{Time: t.Next}
	pl.NextRun = t.Next
	wait := max(t.Next.Sub(now), time.Second)
	trigger := Trigger{Kind: TriggerSchedule}
	if !t.Missed.IsZero() {
		pl.MissedRuns++
		pl.note(trigger, v1alpha1.OutcomeSkipped, fmt.Sprintf("run of %s missed by more than startingDeadlineSeconds", t.Missed.UTC().Format(time.RFC3339)))
		p.Status.LastScheduleTime = &metav1.Time{Time: t.Missed}
	}
	if t.Due.IsZero() {
		return wait, false
	}
	p.Status.LastScheduleTime = &metav1.Time{Time: t.Due}
	run := &v1alpha1.Run{ScheduledTime: metav1.NewTime(t.Due)}
	if !pl.startRun(run) {
		return wait, false
	}
	pl.Runs.Events = append(pl.Runs.Events, PolicyEvent{corev1.EventTypeNormal, "RunStarted", "Run",
		fmt.Sprintf("rolling restart of %d pods (schedule %s)", len(pl.In.Pods), t.Due.UTC().Format(time.RFC3339))})
	return wait, true
}

// fireRestart starts the run restartAt requests once its time has come
// and it was not handled before, or says why it does not; it returns how
// long until that time, zero once it has come, and whether a run started.
func (pl *Plan) fireRestart(at time.Time) (time.Duration, bool) {
	p, now := pl.Policy, pl.In.Now
	if done := p.Status.RestartedAt; done != nil && !at.After(done.Time) {
		return 0, false
	}
	if at.After(now) {
		return at.Sub(now), false
	}
	p.Status.RestartedAt = &metav1.Time{Time: at}
	run := &v1alpha1.Run{ScheduledTime: metav1.NewTime(at), Requested: true}
	if !pl.startRun(run) {
		return 0, false
	}
	pl.Runs.Events = append(pl.Runs.Events, PolicyEvent{corev1.EventTypeNormal, "RunStarted", "Run",
		fmt.Sprintf("rolling restart of %d pods (restart requested for %s)", len(pl.In.Pods), at.UTC().Format(time.RFC3339))})
	return 0, true
}

// startRun makes run the policy's current run, with what it sees of the
// pods as its baseline, unless Rejuv is paused, the policy is suspended, another run is
// going or the baseline is over its bound: then it says why not (the last
// also halts the policy until a run starts).
func (pl *Plan) startRun(run *v1alpha1.Run) bool {
	p := pl.Policy
	trigger := Trigger{Kind: TriggerSchedule, Run: run.ScheduledTime.Time, Requested: run.Requested}
	switch current := p.Status.Run; {
	case pl.In.Paused != "":
		pl.note(trigger, v1alpha1.OutcomePaused, runName(run)+" not started: "+pl.In.Paused)
		return false
	case p.Spec.Suspend:
		pl.note(trigger, v1alpha1.OutcomeSuspended, runName(run)+" not started: the policy is suspended")
		return false
	case current != nil && current.State == v1alpha1.RunRunning:
		pl.note(trigger, v1alpha1.OutcomeSkipped, runName(run)+" not started: the "+runName(current)+" is still going")
		return false
	}
	baseline := BaselineOf(pl.In.Pods)
	if size := BaselineBytes(baseline); size > v1alpha1.MaxBaselineBytes {
		msg := fmt.Sprintf("%s not started: what it would record of its %d pods in status.run.baseline is %d bytes, over its bound of %d bytes; select fewer pods (or pods of fewer containers) per policy",
			runName(run), len(pl.In.Pods), size, v1alpha1.MaxBaselineBytes)
		pl.note(trigger, v1alpha1.OutcomeSkipped, msg)
		pl.halt(&pl.Runs, v1alpha1.ReasonRunTooLarge, msg)
		return false
	}
	run.State, run.Pods, run.Baseline = v1alpha1.RunRunning, int32(len(pl.In.Pods)), baseline
	p.Status.Run = run
	UnhaltFor(p, v1alpha1.ReasonRunFailed)
	UnhaltFor(p, v1alpha1.ReasonRunTooLarge)
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

// anyActive says whether any of requests has not completed. A run's
// request whose pod is gone still holds the run: the request ends (the
// manager ends a request whose pod is gone), and whether it succeeded is
// the run's count. The cache of requests may lag behind that of pods (its
// watch back later from an API server restart): a request it shows in
// flight may have succeeded before the pod's deletion.
func anyActive(requests map[types.UID]*appsv1beta1.ContainerRecreateRequest) bool {
	for _, crr := range requests {
		if crr.Open() {
			return true
		}
	}
	return false
}

// anyInFlight says whether a request, whoever made it, is recreating one
// of pods or has and the cache does not show it yet.
func anyInFlight(pods []*corev1.Pod, facts *Facts) bool {
	for _, pod := range pods {
		if facts.InFlight[pod.UID] {
			return true
		}
	}
	return false
}
