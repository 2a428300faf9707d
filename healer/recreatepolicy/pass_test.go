package recreatepolicy

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/planner"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
	"github.com/rejuv-dev/rejuv/policy"
	"github.com/rejuv-dev/rejuv/policy/policytest"
)

// The steps of a pass after reading are pure: given what was read, the
// judge, the plan and the preview's rendering need no API server. These
// tests run them on objects made here.

// passPod is a running, Ready pod of app web in namespace shop, its
// container app started an hour before now; askedFor annotates it so
// that the annotated rule matches it.
func passPod(name string, askedFor bool, now time.Time) corev1.Pod {
	pod := *policytest.RunningPod(name, 0, strings.Repeat(name[len(name)-1:], 16), now.Add(-time.Hour))
	pod.Labels = map[string]string{"app": "web"}
	pod.Status.ContainerStatuses[0].Ready = true
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	if askedFor {
		pod.Annotations = map[string]string{"rejuv.test/recreate": "yes"}
	}
	return pod
}

// passPolicy is a policy of namespace shop over app web.
func passPolicy(spec v1alpha1.RecreatePolicySpec) *v1alpha1.RecreatePolicy {
	return &v1alpha1.RecreatePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "heal", UID: "heal-uid", Generation: 1,
			CreationTimestamp: metav1.NewTime(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))},
		Spec: spec,
	}
}

// oneAtATime is a policy of the annotated rule that recreates one pod at a
// time (rollout.maxUnavailable 1) and never halts for matching too many.
func oneAtATime() *v1alpha1.RecreatePolicy {
	spec := rulePolicy("web", annotated)
	spec.Rollout.MaxUnavailable = new(intstr.FromInt32(1))
	spec.Limits.MaxMatchingPercent = new(int32(100))
	return passPolicy(spec)
}

// judgeOf reads pods as a pass would and judges them by the policy's rules.
func judgeOf(t *testing.T, p *v1alpha1.RecreatePolicy, pods []corev1.Pod, now time.Time, budget time.Duration) (*passInput, ruleVerdicts) {
	t.Helper()
	spec, errs := policyspec.Parse(&p.Spec)
	if len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	in := previewRead(p, spec, pods, nil, nil, now)
	engine := policy.NewEngine(policy.Options{})
	program, err := engine.Program(context.Background(), policy.Ref{Namespace: p.Namespace, Name: p.Name, UID: p.UID, Generation: p.Generation}, spec.Rules)
	if err != nil {
		t.Fatal(err)
	}
	j := newJudge(context.Background(), p, program, in, &history{}, noMemory("none here"), nil, budget)
	return in, j.all(context.Background(), in.pods, nil)
}

func outcomes(sec section) []string {
	var out []string
	for _, e := range sec.decisions {
		out = append(out, e.decision.Pod+" "+string(e.decision.Outcome))
	}
	return out
}

// TestPlanAdmitsTheRulesCandidatesInOrder: of three annotated pods, the
// rule's candidates in pod order, maxUnavailable 1 admits the first and
// holds the two after it; the plan asks to look again after the
// evaluation interval, and says what the rules decided.
func TestPlanAdmitsTheRulesCandidatesInOrder(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	p := oneAtATime()
	pods := []corev1.Pod{passPod("web-a", true, now), passPod("web-b", false, now), passPod("web-c", true, now), passPod("web-d", true, now)}
	in, v := judgeOf(t, p, pods, now, 0)
	if len(v.candidates) != 3 || v.evaluated != 4 || v.outcomes["match"] != 3 || v.outcomes["no_match"] != 1 {
		t.Fatalf("judged %d pods, %d candidates, outcomes %v; want 4 pods, 3 candidates (3 match, 1 no_match)", v.evaluated, len(v.candidates), v.outcomes)
	}

	pl := planPass(p, in, true, &v, time.Second)
	want := []string{"web-a Created", "web-c Unavailable", "web-d Unavailable"}
	if got := outcomes(pl.rules); !slices.Equal(got, want) {
		t.Errorf("rule decisions %v, want %v", got, want)
	}
	if len(pl.runs.decisions) != 0 {
		t.Errorf("run decisions %v without a schedule", outcomes(pl.runs))
	}
	if pl.requeue != policyspec.DefaultEvaluationInterval || !pl.rulesDecided {
		t.Errorf("requeue %s, rules decided %v; want %s, true", pl.requeue, pl.rulesDecided, policyspec.DefaultEvaluationInterval)
	}
	if p.Status.SelectedPods != 4 || p.Status.LastEvaluationTime == nil || !p.Status.LastEvaluationTime.Time.Equal(now) {
		t.Errorf("status: %d selected, evaluated at %v; want 4 at %s", p.Status.SelectedPods, p.Status.LastEvaluationTime, now)
	}
	if c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionReady); c == nil || c.Reason != v1alpha1.ReasonActive {
		t.Errorf("Ready condition %+v, want Active", c)
	}
	if got := len(pl.decisions()); got != 3 {
		t.Errorf("%d decisions in all, want 3", got)
	}
}

// TestPlanHaltsOnMatchingTooManyPods: when the rules match more of the
// selection than limits.maxMatchingPercent allows, the plan halts the
// policy with one Warning event and admits nobody; a second plan over the
// halted status sends no second event.
func TestPlanHaltsOnMatchingTooManyPods(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	spec := rulePolicy("web", annotated)
	spec.Limits.MaxMatchingPercent = new(int32(50))
	spec.Limits.MinMatchingToHalt = new(int32(1))
	p := passPolicy(spec)
	pods := []corev1.Pod{passPod("web-a", true, now), passPod("web-b", true, now), passPod("web-c", true, now), passPod("web-d", false, now)}
	in, v := judgeOf(t, p, pods, now, 0)
	pl := planPass(p, in, true, &v, time.Second)
	if c := haltedFor(p, v1alpha1.ReasonBlastRadius); c == nil {
		t.Fatalf("conditions %+v: not halted for the blast radius", p.Status.Conditions)
	}
	if len(pl.rules.events) != 1 || pl.rules.events[0].reason != "Halted" {
		t.Errorf("events %+v, want one Halted", pl.rules.events)
	}
	for _, e := range pl.rules.decisions {
		if e.decision.Outcome == v1alpha1.OutcomeCreated {
			t.Errorf("pod %s admitted by a halted policy", e.decision.Pod)
		}
	}
	again := planPass(p, in, true, &v, time.Second)
	if len(again.rules.events) != 0 {
		t.Errorf("a second pass over the halted policy sends events %+v", again.rules.events)
	}
}

// TestPlanHaltsOverTheEvaluationBudget: a judge whose budget is spent
// before the first pod stops there; the plan halts the policy for it,
// decides nothing and keeps the rules' holds going.
func TestPlanHaltsOverTheEvaluationBudget(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	p := passPolicy(rulePolicy("web", annotated))
	pods := []corev1.Pod{passPod("web-a", true, now), passPod("web-b", true, now)}
	in, v := judgeOf(t, p, pods, now, time.Nanosecond)
	if v.overBudget == nil || v.overBudget.evaluated != 0 || len(v.candidates) != 0 {
		t.Fatalf("over budget %+v with %d candidates; want over at the first pod, none", v.overBudget, len(v.candidates))
	}
	pl := planPass(p, in, true, &v, time.Nanosecond)
	c := haltedFor(p, v1alpha1.ReasonEvaluationBudget)
	if c == nil || !strings.Contains(c.Message, "for 0 of the 2 selected pods") {
		t.Errorf("Halted condition %+v, want one for the evaluation budget naming 0 of 2 pods", c)
	}
	if len(pl.decisions()) != 0 || pl.rulesDecided || pl.requeue != 0 {
		t.Errorf("decisions %v, rules decided %v, requeue %s; want none, false, 0", pl.decisions(), pl.rulesDecided, pl.requeue)
	}
}

// TestPlanStartsAScheduledRun: a schedule due now starts a run over the
// selected pods, with a RunStarted event and every pod a pending
// decision admitted as far as maxUnavailable allows; a run with pods left
// is looked at again within runRecheck.
func TestPlanStartsAScheduledRun(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	p := passPolicy(v1alpha1.RecreatePolicySpec{
		Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Schedule: &v1alpha1.Schedule{Cron: "0 12 * * *", TimeZone: "UTC"},
		Rollout:  v1alpha1.Rollout{MaxUnavailable: new(intstr.FromInt32(1))},
	})
	p.Status.LastScheduleTime = &metav1.Time{Time: now.Add(-24 * time.Hour)}
	pods := []corev1.Pod{passPod("web-a", false, now), passPod("web-b", false, now)}
	spec, errs := policyspec.Parse(&p.Spec)
	if len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	in := previewRead(p, spec, pods, nil, nil, now)
	pl := planPass(p, in, false, nil, time.Second)
	run := p.Status.Run
	if run == nil || run.State != v1alpha1.RunRunning || !run.ScheduledTime.Time.Equal(now) || run.Pods != 2 || len(run.Baseline) != 2 {
		t.Fatalf("run %+v, want one running at %s over 2 pods with their baseline", run, now)
	}
	if len(pl.runs.events) != 1 || pl.runs.events[0].reason != "RunStarted" {
		t.Errorf("events %+v, want one RunStarted", pl.runs.events)
	}
	want := []string{"web-a Created", "web-b Unavailable"}
	if got := outcomes(pl.runs); !slices.Equal(got, want) {
		t.Errorf("run decisions %v, want %v", got, want)
	}
	if pl.requeue != runRecheck || !pl.nextRun.Equal(now.Add(24*time.Hour)) {
		t.Errorf("requeue %s, next run %s; want %s, %s", pl.requeue, pl.nextRun, runRecheck, now.Add(24*time.Hour))
	}
}

// TestPlanSaysAPodUpToDateOncePerRun: a run's pod started again since the
// run began, by something else, is decided UpToDate at the first pass
// only; the passes after find that decision in the status.
func TestPlanSaysAPodUpToDateOncePerRun(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	p := passPolicy(v1alpha1.RecreatePolicySpec{Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}})
	before := []corev1.Pod{passPod("web-a", false, now), passPod("web-b", false, now)}
	var baselinePods []*corev1.Pod
	for i := range before {
		baselinePods = append(baselinePods, &before[i])
	}
	at := now.Add(-time.Minute)
	p.Spec.RestartAt, p.Status.RestartedAt = &metav1.Time{Time: at}, &metav1.Time{Time: at}
	p.Status.Run = &v1alpha1.Run{State: v1alpha1.RunRunning, ScheduledTime: metav1.NewTime(at), Requested: true, Pods: 2, Baseline: planner.BaselineOf(baselinePods)}
	restarted := passPod("web-b", false, now)
	restarted.Status.ContainerStatuses[0].RestartCount = 1
	restarted.Status.ContainerStatuses[0].ContainerID = "containerd://bbbbbbbbbbbb0002"
	pods := []corev1.Pod{before[0], restarted}
	spec, errs := policyspec.Parse(&p.Spec)
	if len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	in := previewRead(p, spec, pods, nil, nil, now)
	pl := planPass(p, in, false, nil, time.Second)
	want := []string{"web-b UpToDate", "web-a Created"}
	if got := outcomes(pl.runs); !slices.Equal(got, want) {
		t.Fatalf("run decisions %v, want %v", got, want)
	}
	flush(p, pl.decisions())
	next := planPass(p, previewRead(p, spec, pods, nil, nil, now.Add(time.Second)), false, nil, time.Second)
	if got := outcomes(next.runs); !slices.Equal(got, []string{"web-a Created"}) {
		t.Errorf("next pass's run decisions %v, want only web-a Created", got)
	}
}

// TestPlanCountsRequestsInFlight: a pod with a request in flight, whoever
// created it, counts as unavailable: with maxUnavailable 1 the plan admits
// no other candidate, and the budget's count says so.
func TestPlanCountsRequestsInFlight(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	p := oneAtATime()
	pods := []corev1.Pod{passPod("web-a", true, now), passPod("web-b", false, now)}
	_, v := judgeOf(t, p, pods, now, 0)
	parsed, _ := policyspec.Parse(&p.Spec)
	byHand := appsv1beta1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "by-hand", Labels: map[string]string{appsv1beta1.PodUIDLabel: string(pods[1].UID)}},
		Spec:       appsv1beta1.ContainerRecreateRequestSpec{PodName: "web-b"},
	}
	in := previewRead(p, parsed, pods, []appsv1beta1.ContainerRecreateRequest{byHand}, nil, now)
	if !in.facts.inFlight[types.UID("web-b-uid")] {
		t.Fatal("the request made by hand is not read as in flight")
	}
	pl := planPass(p, in, true, &v, time.Second)
	if got := outcomes(pl.rules); !slices.Equal(got, []string{"web-a Unavailable"}) {
		t.Errorf("rule decisions %v, want web-a held for maxUnavailable", got)
	}
	if pl.s.Unavailable != 1 || pl.s.MaxUnavailable != 1 {
		t.Errorf("unavailable %d of %d, want 1 of 1", pl.s.Unavailable, pl.s.MaxUnavailable)
	}
}

// TestJudgeLeavesUnrestartableContainersAlone: a match on a container the
// kubelet would not start again (a pod whose restartPolicy is Never) is
// no candidate but a pod left alone, and the plan says why.
func TestJudgeLeavesUnrestartableContainersAlone(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	p := passPolicy(rulePolicy("web", annotated))
	pod := passPod("web-a", true, now)
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	in, v := judgeOf(t, p, []corev1.Pod{pod}, now, 0)
	if len(v.candidates) != 0 || len(v.unrestartable) != 1 {
		t.Fatalf("%d candidates, %d unrestartable; want 0, 1", len(v.candidates), len(v.unrestartable))
	}
	pl := planPass(p, in, true, &v, time.Second)
	if got := outcomes(pl.rules); !slices.Equal(got, []string{"web-a Skipped"}) || pl.rules.decisions[0].gated {
		t.Errorf("rule decisions %v, want web-a Skipped outside the gates", got)
	}
}
