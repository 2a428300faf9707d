package planner

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
)

var now = time.Date(2026, 11, 23, 3, 30, 0, 0, time.UTC)

func pod(uid string, ready bool) *corev1.Pod {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-" + uid, UID: types.UID(uid)},
		Status:     corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}},
	}
}

func ruleCandidate(p *corev1.Pod) *PodCandidate {
	return &PodCandidate{Pod: p, Containers: []string{"app"}, Trigger: Trigger{Kind: TriggerRule, Rule: "stuck"}, Reason: "not ready for 12m"}
}

// leakCandidate is a match of the memory rule leak.
func leakCandidate(p *corev1.Pod) *PodCandidate {
	return &PodCandidate{Pod: p, Containers: []string{"app"}, Trigger: Trigger{Kind: TriggerRule, Rule: "leak"}, Reason: "working set grows"}
}

// recreatedBy says that rule (or a run, for "") recreated container app of
// pod a ago.
func recreatedBy(rule string, ago time.Duration) func(*Situation) {
	return func(s *Situation) {
		key := ContainerKey{"a", "app"}
		s.LastRecreated[key] = now.Add(-ago)
		if rule != "" {
			s.LastRule[key] = rule
		}
	}
}

func scheduleCandidate(p *corev1.Pod) *PodCandidate {
	return &PodCandidate{Pod: p, Containers: []string{"app"}, Trigger: Trigger{Kind: TriggerSchedule, Run: now.Add(-30 * time.Minute)}, Reason: "scheduled run"}
}

// situation is a healthy policy of 10 selected pods with room for one more
// recreation under every limit.
func situation() *Situation {
	return &Situation{
		Now:                now,
		InFlight:           map[types.UID]bool{},
		LastRecreated:      map[ContainerKey]time.Time{},
		Cooldown:           30 * time.Minute,
		LastRule:           map[ContainerKey]string{},
		MemoryRules:        map[string]bool{"leak": true, "near": true},
		MemoryRecurrence:   2 * time.Hour,
		CreatedLastHour:    4,
		MaxPerHour:         new(int32(5)),
		Selected:           10,
		Matching:           5,
		MaxMatchingPercent: 50,
		MinMatchingToHalt:  2,
		Unavailable:        1,
		MaxUnavailable:     2,
	}
}

func window(t *testing.T, cron string) policyspec.Window {
	t.Helper()
	spec := v1alpha1.RecreatePolicySpec{Rules: []v1alpha1.Rule{{Name: "x", Rego: "package x\nrecreate := set()"}}, Windows: []v1alpha1.Window{{Cron: cron}}}
	parsed, errs := policyspec.Parse(&spec)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return parsed.Windows[0]
}

func TestGates(t *testing.T) {
	cases := []struct {
		name      string
		change    func(*Situation)
		candidate func() *PodCandidate
		want      v1alpha1.DecisionOutcome
	}{
		{"admitted at every limit's edge", nil, func() *PodCandidate { return ruleCandidate(pod("a", true)) }, v1alpha1.OutcomeCreated},
		{"paused", func(s *Situation) { s.Paused = "Rejuv is paused" }, func() *PodCandidate { return ruleCandidate(pod("a", true)) }, v1alpha1.OutcomePaused},
		{"paused holds schedules too, before suspended", func(s *Situation) { s.Paused, s.Suspended = "Rejuv is paused", true }, func() *PodCandidate { return scheduleCandidate(pod("a", true)) }, v1alpha1.OutcomePaused},
		{"paused holds a dry run", func(s *Situation) { s.Paused, s.DryRun = "Rejuv is paused", true }, func() *PodCandidate { return ruleCandidate(pod("a", true)) }, v1alpha1.OutcomePaused},
		{"suspended", func(s *Situation) { s.Suspended = true }, func() *PodCandidate { return ruleCandidate(pod("a", true)) }, v1alpha1.OutcomeSuspended},
		{"suspended holds schedules too", func(s *Situation) { s.Suspended = true }, func() *PodCandidate { return scheduleCandidate(pod("a", true)) }, v1alpha1.OutcomeSuspended},
		{"outside window", func(s *Situation) { s.Windows = []policyspec.Window{window(t, "* 0-2 * * *")} }, func() *PodCandidate { return ruleCandidate(pod("a", true)) }, v1alpha1.OutcomeOutsideWindow},
		{"inside window's last hour", func(s *Situation) { s.Windows = []policyspec.Window{window(t, "* 0-3 * * *")} }, func() *PodCandidate { return ruleCandidate(pod("a", true)) }, v1alpha1.OutcomeCreated},
		{"windows do not hold schedules", func(s *Situation) { s.Windows = []policyspec.Window{window(t, "* 0-2 * * *")} }, func() *PodCandidate { return scheduleCandidate(pod("a", true)) }, v1alpha1.OutcomeCreated},
		{"in flight", func(s *Situation) { s.InFlight["a"] = true }, func() *PodCandidate { return ruleCandidate(pod("a", true)) }, v1alpha1.OutcomeInFlight},
		{"cooldown: a second short", func(s *Situation) { s.LastRecreated[ContainerKey{"a", "app"}] = now.Add(-30*time.Minute + time.Second) }, func() *PodCandidate { return ruleCandidate(pod("a", true)) }, v1alpha1.OutcomeCooldown},
		{"cooldown: just over", func(s *Situation) { s.LastRecreated[ContainerKey{"a", "app"}] = now.Add(-30 * time.Minute) }, func() *PodCandidate { return ruleCandidate(pod("a", true)) }, v1alpha1.OutcomeCreated},
		{"cooldown does not hold schedules", func(s *Situation) { s.LastRecreated[ContainerKey{"a", "app"}] = now }, func() *PodCandidate { return scheduleCandidate(pod("a", true)) }, v1alpha1.OutcomeCreated},
		{"cooldown of another container", func(s *Situation) { s.LastRecreated[ContainerKey{"a", "proxy"}] = now }, func() *PodCandidate { return ruleCandidate(pod("a", true)) }, v1alpha1.OutcomeCreated},
		{"recurring: the leak again a second short of the recurrence", recreatedBy("leak", 2*time.Hour-time.Second), func() *PodCandidate { return leakCandidate(pod("a", true)) }, v1alpha1.OutcomeRecurring},
		{"recurring: another memory rule recreated it", recreatedBy("near", time.Hour), func() *PodCandidate { return leakCandidate(pod("a", true)) }, v1alpha1.OutcomeRecurring},
		{"recurring: just over the recurrence", recreatedBy("leak", 2*time.Hour), func() *PodCandidate { return leakCandidate(pod("a", true)) }, v1alpha1.OutcomeCreated},
		{"recurring: a rule that reads no memory recreated it", recreatedBy("stuck", time.Hour), func() *PodCandidate { return leakCandidate(pod("a", true)) }, v1alpha1.OutcomeCreated},
		{"recurring: a run recreated it", recreatedBy("", time.Hour), func() *PodCandidate { return leakCandidate(pod("a", true)) }, v1alpha1.OutcomeCreated},
		{"recurring: a rule that reads no memory matches", recreatedBy("leak", time.Hour), func() *PodCandidate { return ruleCandidate(pod("a", true)) }, v1alpha1.OutcomeCreated},
		{"recurring: the policy asks for every recreation", func(s *Situation) {
			recreatedBy("leak", time.Hour)(s)
			s.MemoryRecurrence = 0
		}, func() *PodCandidate { return leakCandidate(pod("a", true)) }, v1alpha1.OutcomeCreated},
		{"recurring: cooldown holds first", recreatedBy("leak", time.Minute), func() *PodCandidate { return leakCandidate(pod("a", true)) }, v1alpha1.OutcomeCooldown},
		{"rate reached", func(s *Situation) { s.CreatedLastHour = 5 }, func() *PodCandidate { return ruleCandidate(pod("a", true)) }, v1alpha1.OutcomeRateLimited},
		{"no rate limit", func(s *Situation) { s.CreatedLastHour, s.MaxPerHour = 500, nil }, func() *PodCandidate { return ruleCandidate(pod("a", true)) }, v1alpha1.OutcomeCreated},
		{"blast radius: one pod over", func(s *Situation) { s.Matching = 6 }, func() *PodCandidate { return ruleCandidate(pod("a", true)) }, v1alpha1.OutcomeHalted},
		{"blast radius: the one pod of a workload heals", func(s *Situation) { s.Selected, s.Matching, s.Unavailable, s.MaxUnavailable = 1, 1, 0, 1 }, func() *PodCandidate { return ruleCandidate(pod("a", true)) }, v1alpha1.OutcomeCreated},
		{"blast radius: both pods of two", func(s *Situation) { s.Selected, s.Matching = 2, 2 }, func() *PodCandidate { return ruleCandidate(pod("a", true)) }, v1alpha1.OutcomeHalted},
		{"blast radius: one of two is half", func(s *Situation) { s.Selected, s.Matching = 2, 1 }, func() *PodCandidate { return ruleCandidate(pod("a", true)) }, v1alpha1.OutcomeCreated},
		{"blast radius: fewer pods than the floor", func(s *Situation) { s.Selected, s.Matching, s.MinMatchingToHalt = 3, 3, 4 }, func() *PodCandidate { return ruleCandidate(pod("a", true)) }, v1alpha1.OutcomeCreated},
		{"blast radius does not hold schedules", func(s *Situation) { s.Matching = 10 }, func() *PodCandidate { return scheduleCandidate(pod("a", true)) }, v1alpha1.OutcomeCreated},
		{"budget spent", func(s *Situation) { s.Unavailable = 2 }, func() *PodCandidate { return ruleCandidate(pod("a", true)) }, v1alpha1.OutcomeUnavailable},
		{"an unready pod spends no budget", func(s *Situation) { s.Unavailable = 2 }, func() *PodCandidate { return ruleCandidate(pod("a", false)) }, v1alpha1.OutcomeCreated},
		{"disruption budget", func(s *Situation) {
			s.Disruption = noDisruption{}
		}, func() *PodCandidate { return ruleCandidate(pod("a", true)) }, v1alpha1.OutcomeDisruptionBudget},
		{"dry run", func(s *Situation) { s.DryRun = true }, func() *PodCandidate { return ruleCandidate(pod("a", true)) }, v1alpha1.OutcomeDryRun},
		{"dry run still holds at the budget", func(s *Situation) { s.DryRun, s.Unavailable = true, 2 }, func() *PodCandidate { return ruleCandidate(pod("a", true)) }, v1alpha1.OutcomeUnavailable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := situation()
			if tc.change != nil {
				tc.change(s)
			}
			v := s.Admit(tc.candidate())
			if v.Outcome != tc.want {
				t.Errorf("got %s (%s), want %s", v.Outcome, v.Message, tc.want)
			}
			if !v.Admitted() && v.Message == "" {
				t.Errorf("held back without a message")
			}
		})
	}
}

// TestAdmitCountsWhatGetsThrough: one pass over many candidates never lets
// more through than the budget and the rate allow.
func TestAdmitCountsWhatGetsThrough(t *testing.T) {
	s := situation()
	s.MaxPerHour = new(int32(10))
	s.Unavailable, s.MaxUnavailable = 0, 2
	var created []string
	for _, uid := range []string{"a", "b", "c", "d"} {
		c := scheduleCandidate(pod(uid, true))
		if v := s.Admit(c); v.Admitted() {
			created = append(created, uid)
		} else if v.Outcome != v1alpha1.OutcomeUnavailable {
			t.Errorf("pod %s: %s, want Unavailable", uid, v.Outcome)
		}
	}
	if len(created) != 2 || s.Unavailable != 2 || s.CreatedLastHour != 6 {
		t.Errorf("created %v, unavailable %d, created last hour %d; want 2 pods, 2, 6", created, s.Unavailable, s.CreatedLastHour)
	}
	if v := s.Admit(scheduleCandidate(pod("a", true))); v.Outcome != v1alpha1.OutcomeInFlight {
		t.Errorf("the same pod again: %s, want InFlight", v.Outcome)
	}
}

func TestRequestNameIsDeterministic(t *testing.T) {
	policy := &v1alpha1.RecreatePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-health", UID: "p1"}}
	p := pod("a", true)
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", ContainerID: "containerd://1"}}
	a, b := RequestName(policy, ruleCandidate(p)), RequestName(policy, ruleCandidate(p.DeepCopy()))
	if a != b {
		t.Fatalf("same candidate, two names: %s %s", a, b)
	}
	recreated := p.DeepCopy()
	recreated.Status.ContainerStatuses[0].ContainerID = "containerd://2"
	if RequestName(policy, ruleCandidate(recreated)) == a {
		t.Error("a recreated container found again gets the old request's name")
	}
	if RequestName(policy, scheduleCandidate(p)) == a {
		t.Error("a scheduled run and a rule share a name")
	}
	long := policy.DeepCopy()
	long.Name = "a-very-long-policy-name-that-goes-on-and-on-and-on-and-on"
	if n := RequestName(long, ruleCandidate(p)); len(n) > 63 {
		t.Errorf("name %q is %d characters", n, len(n))
	}
}

func TestRequest(t *testing.T) {
	policy := &v1alpha1.RecreatePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-health", UID: "p1"},
		Spec: v1alpha1.RecreatePolicySpec{Recreate: v1alpha1.RecreateTemplate{
			ActiveDeadlineSeconds: new(int64(300)), TTLSecondsAfterFinished: new(int32(600)),
		}},
	}
	crr := Request(policy, ruleCandidate(pod("a", true)))
	if crr.Labels[appsv1beta1.PolicyLabel] != "web-health" || crr.Labels[appsv1beta1.TriggerLabel] != "rule.stuck" || crr.Annotations[appsv1beta1.ReasonAnnotation] != "not ready for 12m" {
		t.Errorf("labels %v annotations %v", crr.Labels, crr.Annotations)
	}
	if len(crr.OwnerReferences) != 1 || crr.OwnerReferences[0].UID != "p1" || crr.Spec.PodName != "web-a" || *crr.Spec.ActiveDeadlineSeconds != 300 || crr.Spec.Containers[0].Name != "app" {
		t.Errorf("request %+v", crr)
	}
	if got := Request(policy, scheduleCandidate(pod("a", true))); got.Annotations[appsv1beta1.RunAnnotation] != "2026-11-23T03:00:00Z" || got.Labels[appsv1beta1.TriggerLabel] != "schedule" {
		t.Errorf("scheduled request: labels %v annotations %v", got.Labels, got.Annotations)
	}
	if s := crr.Spec.Strategy; s == nil || s.ForceRecreate || s.UnreadyGracePeriodSeconds == nil || *s.UnreadyGracePeriodSeconds != policyspec.DefaultUnreadyGraceSeconds {
		t.Errorf("a request of a policy with no strategy has strategy %+v; want the default unready grace alone", s)
	}
	// A policy's own grace, none (0) included, is its requests'.
	policy.Spec.Recreate.Strategy = &appsv1beta1.ContainerRecreateRequestStrategy{UnreadyGracePeriodSeconds: new(int64(0))}
	if got := Request(policy, ruleCandidate(pod("a", true))); *got.Spec.Strategy.UnreadyGracePeriodSeconds != 0 {
		t.Errorf("a policy asking for no unready grace made a request with %ds", *got.Spec.Strategy.UnreadyGracePeriodSeconds)
	}
	// A container hung in its start is stopped at once, whatever else the
	// policy's strategy says.
	policy.Spec.Recreate.Strategy = &appsv1beta1.ContainerRecreateRequestStrategy{MinStartedSeconds: 5}
	forced := ruleCandidate(pod("a", true))
	forced.Force = true
	if got := Request(policy, forced); !got.Spec.Strategy.ForceRecreate || got.Spec.Strategy.MinStartedSeconds != 5 || policy.Spec.Recreate.Strategy.ForceRecreate {
		t.Errorf("forced request: strategy %+v (policy's now %+v), want the policy's with forceRecreate", got.Spec.Strategy, policy.Spec.Recreate.Strategy)
	}
}

// TestRequestOutlivesTheLimits: a request is kept at least as long as the
// policy's rate and cooldown look back, since they count from requests.
func TestRequestOutlivesTheLimits(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ttl    *int32
		limits v1alpha1.Limits
		want   *int32
	}{
		{"no limits", new(int32(60)), v1alpha1.Limits{}, new(int32(60))},
		{"maxPerHour", new(int32(60)), v1alpha1.Limits{MaxPerHour: new(int32(3))}, new(int32(3600))},
		{"cooldown", new(int32(60)), v1alpha1.Limits{Cooldown: &metav1.Duration{Duration: 2 * time.Hour}}, new(int32(7200))},
		{"long enough", new(int32(86400)), v1alpha1.Limits{MaxPerHour: new(int32(3))}, new(int32(86400))},
		{"memory rules, default recurrence", new(int32(60)), v1alpha1.Limits{}, new(int32(7200))},
		{"memory rules, recurrence off", new(int32(60)), v1alpha1.Limits{MemoryRecurrence: &metav1.Duration{}}, new(int32(60))},
		{"memory rules, recurrence 5h", new(int32(60)), v1alpha1.Limits{MemoryRecurrence: &metav1.Duration{Duration: 5 * time.Hour}}, new(int32(18000))},
		{"kept for ever", nil, v1alpha1.Limits{MaxPerHour: new(int32(3))}, nil},
	} {
		policy := &v1alpha1.RecreatePolicy{Spec: v1alpha1.RecreatePolicySpec{Limits: tc.limits, Recreate: v1alpha1.RecreateTemplate{TTLSecondsAfterFinished: tc.ttl}}}
		if strings.HasPrefix(tc.name, "memory rules") {
			policy.Spec.Rules = []v1alpha1.Rule{{Name: "leak", Builtin: "memory-leak"}}
		}
		got := Request(policy, ruleCandidate(pod("a", true))).Spec.TTLSecondsAfterFinished
		if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
			t.Errorf("%s: ttl %v, want %v", tc.name, deref(got), deref(tc.want))
		}
	}
}

func deref(p *int32) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestCheckShowsEveryGate: where Admit stops at the first gate, Check says
// what each gate makes of the candidate, counts nothing, and leaves the
// rules-only gates out for a run's candidate.
func TestCheckShowsEveryGate(t *testing.T) {
	s := situation()
	p := pod("a", true)
	s.InFlight[p.UID] = true
	s.LastRecreated[ContainerKey{p.UID, "app"}] = now.Add(-10 * time.Minute)
	s.CreatedLastHour = 5

	held := map[v1alpha1.DecisionOutcome]string{}
	for _, c := range s.Check(ruleCandidate(p)) {
		if c.Message != "" {
			held[c.Gate] = c.Message
		}
	}
	for _, want := range []v1alpha1.DecisionOutcome{v1alpha1.OutcomeInFlight, v1alpha1.OutcomeCooldown, v1alpha1.OutcomeRateLimited} {
		if held[want] == "" {
			t.Errorf("Check does not show gate %s holding the candidate back: %v", want, held)
		}
	}
	if len(held) != 3 {
		t.Errorf("gates holding the candidate back: %v, want in flight, cooldown and rate", held)
	}
	if got := s.Admit(ruleCandidate(p)); got.Outcome != v1alpha1.OutcomeInFlight {
		t.Errorf("Admit: %s, want the first gate, InFlight", got.Outcome)
	}
	if s.CreatedLastHour != 5 || s.Unavailable != 1 {
		t.Errorf("Check or a refused Admit counted the candidate: %d created, %d unavailable", s.CreatedLastHour, s.Unavailable)
	}

	for _, c := range s.Check(scheduleCandidate(p)) {
		rulesOnly := c.Gate == v1alpha1.OutcomeOutsideWindow || c.Gate == v1alpha1.OutcomeCooldown || c.Gate == v1alpha1.OutcomeRecurring || c.Gate == v1alpha1.OutcomeHalted
		if c.Applies == rulesOnly || (!c.Applies && c.Message != "") {
			t.Errorf("run candidate, gate %s: applies %v message %q", c.Gate, c.Applies, c.Message)
		}
	}
}

// noDisruption is budgets that allow no disruption.
type noDisruption struct{}

func (noDisruption) Allows(types.UID) (bool, string) {
	return false, "PodDisruptionBudget shop/web allows no disruption"
}

func (noDisruption) Take(types.UID) {}
