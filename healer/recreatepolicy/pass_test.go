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
	pod := *policytest.ReadyPod(name, strings.Repeat(name[len(name)-1:], 16), now.Add(-time.Hour))
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
func judgeOf(t *testing.T, p *v1alpha1.RecreatePolicy, pods []corev1.Pod, now time.Time, budget time.Duration) (*planner.Input, ruleVerdicts) {
	t.Helper()
	spec, errs := policyspec.Parse(&p.Spec)
	if len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	in := planner.InputOf(p, spec, pods, nil, nil, now)
	engine := policy.NewEngine(policy.Options{})
	program, err := engine.Program(context.Background(), policy.Ref{Namespace: p.Namespace, Name: p.Name, UID: p.UID, Generation: p.Generation}, spec.Rules)
	if err != nil {
		t.Fatal(err)
	}
	j := newJudge(context.Background(), p, program, in, &history{}, noMemory("none here"), nil, budget)
	return in, j.all(context.Background(), in.Pods, nil)
}

func outcomes(sec planner.Section) []string {
	var out []string
	for _, e := range sec.Decisions {
		out = append(out, e.Decision.Pod+" "+string(e.Decision.Outcome))
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
	if len(v.Candidates) != 3 || v.evaluated != 4 || v.outcomes["match"] != 3 || v.outcomes["no_match"] != 1 {
		t.Fatalf("judged %d pods, %d candidates, outcomes %v; want 4 pods, 3 candidates (3 match, 1 no_match)", v.evaluated, len(v.Candidates), v.outcomes)
	}

	pl := planner.Pass(p, in, true, &v.Verdicts)
	want := []string{"web-a Created", "web-c Unavailable", "web-d Unavailable"}
	if got := outcomes(pl.Rules); !slices.Equal(got, want) {
		t.Errorf("rule decisions %v, want %v", got, want)
	}
	if len(pl.Runs.Decisions) != 0 {
		t.Errorf("run decisions %v without a schedule", outcomes(pl.Runs))
	}
	if pl.Requeue != policyspec.DefaultEvaluationInterval || !pl.RulesDecided {
		t.Errorf("requeue %s, rules decided %v; want %s, true", pl.Requeue, pl.RulesDecided, policyspec.DefaultEvaluationInterval)
	}
	if p.Status.SelectedPods != 4 || p.Status.LastEvaluationTime == nil || !p.Status.LastEvaluationTime.Time.Equal(now) {
		t.Errorf("status: %d selected, evaluated at %v; want 4 at %s", p.Status.SelectedPods, p.Status.LastEvaluationTime, now)
	}
	if c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionReady); c == nil || c.Reason != v1alpha1.ReasonActive {
		t.Errorf("Ready condition %+v, want Active", c)
	}
	if got := len(pl.Decisions()); got != 3 {
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
	pl := planner.Pass(p, in, true, &v.Verdicts)
	if c := planner.HaltedFor(p, v1alpha1.ReasonBlastRadius); c == nil {
		t.Fatalf("conditions %+v: not halted for the blast radius", p.Status.Conditions)
	}
	if len(pl.Rules.Events) != 1 || pl.Rules.Events[0].Reason != "Halted" {
		t.Errorf("events %+v, want one Halted", pl.Rules.Events)
	}
	for _, e := range pl.Rules.Decisions {
		if e.Decision.Outcome == v1alpha1.OutcomeCreated {
			t.Errorf("pod %s admitted by a halted policy", e.Decision.Pod)
		}
	}
	again := planner.Pass(p, in, true, &v.Verdicts)
	if len(again.Rules.Events) != 0 {
		t.Errorf("a second pass over the halted policy sends events %+v", again.Rules.Events)
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
	if v.overBudget == nil || v.overBudget.evaluated != 0 || len(v.Candidates) != 0 {
		t.Fatalf("over budget %+v with %d candidates; want over at the first pod, none", v.overBudget, len(v.Candidates))
	}
	pl := planner.Pass(p, in, true, &v.Verdicts)
	c := planner.HaltedFor(p, v1alpha1.ReasonEvaluationBudget)
	if c == nil || !strings.Contains(c.Message, "for 0 of the 2 selected pods") {
		t.Errorf("Halted condition %+v, want one for the evaluation budget naming 0 of 2 pods", c)
	}
	if len(pl.Decisions()) != 0 || pl.RulesDecided || pl.Requeue != 0 {
		t.Errorf("decisions %v, rules decided %v, requeue %s; want none, false, 0", pl.Decisions(), pl.RulesDecided, pl.Requeue)
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
	in := planner.InputOf(p, parsed, pods, []appsv1beta1.ContainerRecreateRequest{byHand}, nil, now)
	if !in.Facts.InFlight[types.UID("web-b-uid")] {
		t.Fatal("the request made by hand is not read as in flight")
	}
	pl := planner.Pass(p, in, true, &v.Verdicts)
	if got := outcomes(pl.Rules); !slices.Equal(got, []string{"web-a Unavailable"}) {
		t.Errorf("rule decisions %v, want web-a held for maxUnavailable", got)
	}
	if pl.Situation.Unavailable != 1 || pl.Situation.MaxUnavailable != 1 {
		t.Errorf("unavailable %d of %d, want 1 of 1", pl.Situation.Unavailable, pl.Situation.MaxUnavailable)
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
	if len(v.Candidates) != 0 || len(v.Unrestartable) != 1 {
		t.Fatalf("%d candidates, %d unrestartable; want 0, 1", len(v.Candidates), len(v.Unrestartable))
	}
	pl := planner.Pass(p, in, true, &v.Verdicts)
	if got := outcomes(pl.Rules); !slices.Equal(got, []string{"web-a Skipped"}) || pl.Rules.Decisions[0].Gated {
		t.Errorf("rule decisions %v, want web-a Skipped outside the gates", got)
	}
}
