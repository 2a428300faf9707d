package recreatepolicy

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/planner"
	"github.com/rejuv-dev/rejuv/policy/policytest"
)

// annotated matches pods annotated rejuv.test/recreate=yes.
const annotated = `package custom
import rego.v1
recreate contains {"container": c.name, "reason": "asked by annotation"} if {
	input.pod.metadata.annotations["rejuv.test/recreate"] == "yes"
	some c in input.containers
}
`

func annotate(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	patch := client.MergeFrom(pod.DeepCopy())
	pod.Annotations = map[string]string{"rejuv.test/recreate": "yes"}
	if err := admin.Patch(context.Background(), pod, patch); err != nil {
		t.Fatal(err)
	}
}

func unannotate(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	patch := client.MergeFrom(pod.DeepCopy())
	pod.Annotations = nil
	if err := admin.Patch(context.Background(), pod, patch); err != nil {
		t.Fatal(err)
	}
}

func rulePolicy(selector string, rego string) v1alpha1.RecreatePolicySpec {
	return v1alpha1.RecreatePolicySpec{
		Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": selector}},
		Rules:    []v1alpha1.Rule{{Name: "asked", Rego: rego}},
		Rollout:  v1alpha1.Rollout{MaxUnavailable: new(intstr.FromString("100%"))},
	}
}

// TestInlineRuleTriggers: an inline rule matching an annotation creates one
// request, named, labelled, annotated and owned as designed, and its twin
// is left alone; evaluating again creates nothing more.
func TestInlineRuleTriggers(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	pods := createPods(t, ns, "web", 2, c.clock.Now().Add(-time.Hour))
	p := createPolicy(t, ns, "custom", rulePolicy("web", annotated))
	c.reconcile(t, p)
	if n := len(requestsOf(t, p)); n != 0 {
		t.Fatalf("%d requests before any pod is annotated", n)
	}
	annotate(t, pods[0])
	for range 2 {
		c.clock.Step(30 * time.Second)
		c.reconcile(t, p)
	}
	crrs := requestsOf(t, p)
	if len(crrs) != 1 {
		t.Fatalf("%d requests, want 1", len(crrs))
	}
	crr := crrs[0]
	if crr.Spec.PodName != pods[0].Name || crr.Labels["rejuv.dev/trigger"] != "rule.asked" ||
		!strings.Contains(crr.Annotations["rejuv.dev/reason"], "asked by annotation") ||
		len(crr.OwnerReferences) != 1 || crr.OwnerReferences[0].UID != p.UID {
		t.Errorf("request %+v", crr.ObjectMeta)
	}
	status := getPolicy(t, p).Status
	if status.SelectedPods != 2 || status.ActiveRecreations != 1 || status.LastEvaluationTime == nil {
		t.Errorf("status: selected %d active %d lastEvaluation %v", status.SelectedPods, status.ActiveRecreations, status.LastEvaluationTime)
	}
	if d := status.RecentDecisions; len(d) == 0 || d[0].Pod != pods[0].Name || d[0].Outcome != v1alpha1.OutcomeInFlight {
		t.Errorf("latest decision %+v, want the request in flight for %s", d, pods[0].Name)
	}
}

// TestRuleMatchOnAPodTheKubeletWouldNotRestart: a rule matching a pod with
// restartPolicy Never or OnFailure, or a container whose own restartPolicy
// is Never, creates no request (the kubelet would not start the container
// again) and says so in a Skipped decision that carries the rule's reason
// and names the pod's field; evaluating again does not pile decisions up.
func TestRuleMatchOnAPodTheKubeletWouldNotRestart(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	for _, policy := range []corev1.RestartPolicy{corev1.RestartPolicyNever, corev1.RestartPolicyOnFailure, "own-never"} {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: strings.ToLower(string(policy)), Labels: map[string]string{"app": "batch"},
				Annotations: map[string]string{"rejuv.test/recreate": "yes"}},
			Spec: corev1.PodSpec{NodeName: "node-a", RestartPolicy: policy, Containers: []corev1.Container{{Name: "app", Image: "img"}}},
		}
		if policy == "own-never" {
			pod.Spec.RestartPolicy = corev1.RestartPolicyAlways
			pod.Spec.Containers[0].RestartPolicy = new(corev1.ContainerRestartPolicyNever)
		}
		if err := admin.Create(context.Background(), pod); err != nil {
			t.Fatal(err)
		}
		setPodStatus(t, pod, true, "containerd://"+pod.Name+"-1", 0, c.clock.Now().Add(-time.Hour))
	}
	p := createPolicy(t, ns, "custom", rulePolicy("batch", annotated))
	for range 3 {
		c.reconcile(t, p)
		c.clock.Step(30 * time.Second)
	}
	if crrs := requestsOf(t, p); len(crrs) != 0 {
		t.Errorf("%d requests for pods the kubelet would not restart: %s", len(crrs), crrs[0].Spec.PodName)
	}
	decisions := getPolicy(t, p).Status.RecentDecisions
	if len(decisions) != 3 {
		t.Errorf("%d decisions after three evaluations, want one per pod: %+v", len(decisions), decisions)
	}
	for pod, field := range map[string]string{"never": "spec.restartPolicy is Never", "onfailure": "spec.restartPolicy is OnFailure", "own-never": "spec.containers[0].restartPolicy is Never"} {
		var said bool
		for _, d := range decisions {
			said = said || d.Pod == pod && d.Outcome == v1alpha1.OutcomeSkipped && d.Trigger == "rule/asked" &&
				strings.Contains(d.Reason, "asked by annotation") && strings.HasPrefix(d.Message, field+": the kubelet would not start container app again")
		}
		if !said {
			t.Errorf("no Skipped decision for pod %s with the rule's reason and why: %+v", pod, decisions)
		}
	}
}

func TestDryRunCreatesNothing(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	pods := createPods(t, ns, "web", 2, c.clock.Now().Add(-time.Hour))
	spec := rulePolicy("web", annotated)
	spec.DryRun = true
	p := createPolicy(t, ns, "dry", spec)
	annotate(t, pods[1])
	c.reconcile(t, p)
	if n := len(requestsOf(t, p)); n != 0 {
		t.Fatalf("%d requests in dry run", n)
	}
	status := getPolicy(t, p).Status
	if d := status.RecentDecisions; len(d) != 1 || d[0].Outcome != v1alpha1.OutcomeDryRun || d[0].Pod != pods[1].Name {
		t.Errorf("decisions %+v, want one DryRun for %s", d, pods[1].Name)
	}
	if c := meta.FindStatusCondition(status.Conditions, v1alpha1.ConditionReady); c == nil || c.Reason != v1alpha1.ReasonDryRun {
		t.Errorf("Ready condition %+v, want reason DryRun", c)
	}
	select {
	case e := <-c.recorder.Events:
		if !strings.Contains(e, "DryRun") || !strings.Contains(e, pods[1].Name) {
			t.Errorf("event %q, want a DryRun event naming %s", e, pods[1].Name)
		}
	default:
		t.Error("no event for the dry-run decision")
	}
	if got := testutil.ToFloat64(decisions.WithLabelValues("dry", ns, "rule", "DryRun")); got != 1 {
		t.Errorf("rejuv_policy_decisions_total{outcome=DryRun} = %v, want 1", got)
	}
}

// TestLimitsHoldBack: cooldown, maxPerHour and maxMatchingPercent each hold
// recreations back, and the decision says why.
func TestLimitsHoldBack(t *testing.T) {
	needsAPIServer(t)
	cases := []struct {
		name    string
		limits  v1alpha1.Limits
		pods    int
		matches int
		want    v1alpha1.DecisionOutcome
		message string
	}{
		{"maxPerHour", v1alpha1.Limits{MaxPerHour: new(int32(1)), MaxMatchingPercent: new(int32(100))}, 3, 2, v1alpha1.OutcomeRateLimited, "limits.maxPerHour is 1"},
		{"maxMatchingPercent", v1alpha1.Limits{MaxMatchingPercent: new(int32(50))}, 4, 3, v1alpha1.OutcomeHalted, "rules match 3 of 4 selected pods"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := newNamespace(t)
			c := newController(t, 0)
			pods := createPods(t, ns, "web", tc.pods, c.clock.Now().Add(-time.Hour))
			spec := rulePolicy("web", annotated)
			spec.Limits = tc.limits
			p := createPolicy(t, ns, "limited", spec)
			for _, pod := range pods[:tc.matches] {
				annotate(t, pod)
			}
			c.reconcile(t, p)
			status := getPolicy(t, p).Status
			found := false
			for _, d := range status.RecentDecisions {
				if d.Outcome == tc.want && strings.Contains(d.Message, tc.message) {
					found = true
				}
			}
			if !found {
				t.Errorf("decisions %+v, want %s saying %q", status.RecentDecisions, tc.want, tc.message)
			}
			if tc.want == v1alpha1.OutcomeHalted {
				if n := len(requestsOf(t, p)); n != 0 {
					t.Errorf("%d requests while halted", n)
				}
				if !meta.IsStatusConditionTrue(status.Conditions, v1alpha1.ConditionHalted) {
					t.Errorf("Halted condition not set: %+v", status.Conditions)
				}
				if got := testutil.ToFloat64(halted.WithLabelValues(p.Name, ns)); got != 1 {
					t.Errorf("rejuv_policy_halted is %v, want 1", got)
				}
			}
			// The gate that held them back says how many, the others 0.
			held := tc.matches
			if tc.want == v1alpha1.OutcomeRateLimited {
				held = tc.matches - 1
			}
			for _, gate := range planner.Gates {
				want := 0.0
				if gate == tc.want {
					want = float64(held)
				}
				if got := testutil.ToFloat64(heldBack.WithLabelValues(p.Name, ns, string(gate))); got != want {
					t.Errorf("rejuv_policy_held_back{gate=%q} is %v, want %v", gate, got, want)
				}
			}
			if tc.want == v1alpha1.OutcomeRateLimited && !meta.IsStatusConditionTrue(status.Conditions, v1alpha1.ConditionBudgetExhausted) {
				t.Errorf("BudgetExhausted not set: %+v", status.Conditions)
			}
		})
	}

	t.Run("cooldown", func(t *testing.T) {
		ns := newNamespace(t)
		c := newController(t, 0)
		pods := createPods(t, ns, "web", 2, c.clock.Now().Add(-time.Hour))
		spec := rulePolicy("web", annotated)
		spec.Limits.Cooldown = &metav1.Duration{Duration: 10 * time.Minute}
		p := createPolicy(t, ns, "cool", spec)
		annotate(t, pods[0])
		c.reconcile(t, p)
		crrs := requestsOf(t, p)
		if len(crrs) != 1 {
			t.Fatalf("%d requests, want 1", len(crrs))
		}
		c.clock.Step(time.Minute)
		complete(t, c, &crrs[0], true)
		// The annotation is still there: the rule matches the new container.
		c.clock.Step(time.Minute)
		c.reconcile(t, p)
		status := getPolicy(t, p).Status
		if n := len(requestsOf(t, p)); n != 1 || status.RecentDecisions[0].Outcome != v1alpha1.OutcomeCooldown ||
			!strings.Contains(status.RecentDecisions[0].Message, "limits.cooldown is 10m0s") {
			t.Fatalf("%d requests, latest decision %+v; want Cooldown", n, status.RecentDecisions[0])
		}
	})
}

// TestDisruptionBudgetHoldsBack: a PodDisruptionBudget that allows no
// disruption holds the recreation back until it allows one.
func TestDisruptionBudgetHoldsBack(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	pods := createPods(t, ns, "web", 3, c.clock.Now().Add(-time.Hour))
	pdb := createPDB(t, ns, "web", policyv1.PodDisruptionBudgetSpec{MinAvailable: new(intstr.FromInt32(2))})
	p := createPolicy(t, ns, "guarded", rulePolicy("web", annotated))
	annotate(t, pods[0])
	c.reconcile(t, p)
	status := getPolicy(t, p).Status
	if n := len(requestsOf(t, p)); n != 0 || status.RecentDecisions[0].Outcome != v1alpha1.OutcomeDisruptionBudget {
		t.Fatalf("%d requests, decision %+v; want DisruptionBudget", n, status.RecentDecisions)
	}
	pdb.Status = policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1, CurrentHealthy: 3, DesiredHealthy: 2, ExpectedPods: 3, ObservedGeneration: pdb.Generation}
	if err := admin.Status().Update(context.Background(), pdb); err != nil {
		t.Fatal(err)
	}
	c.clock.Step(30 * time.Second)
	c.reconcile(t, p)
	if n := len(requestsOf(t, p)); n != 1 {
		t.Fatalf("%d requests once the budget allows a disruption, want 1", n)
	}
	// The budget held the candidate back for the 30 seconds between the
	// passes, once.
	h := heldBackSeconds.WithLabelValues(p.Name, ns, string(v1alpha1.OutcomeDisruptionBudget)).(prometheus.Histogram)
	var m dto.Metric
	if err := h.Write(&m); err != nil {
		t.Fatal(err)
	}
	if got := m.GetHistogram(); got.GetSampleCount() != 1 || got.GetSampleSum() != 30 {
		t.Errorf("rejuv_policy_held_back_seconds{gate=DisruptionBudget}: %d observations summing to %vs, want one of 30s", got.GetSampleCount(), got.GetSampleSum())
	}
	if got := testutil.ToFloat64(heldBack.WithLabelValues(p.Name, ns, string(v1alpha1.OutcomeDisruptionBudget))); got != 0 {
		t.Errorf("rejuv_policy_held_back{gate=DisruptionBudget} is %v once the budget let the pod go, want 0", got)
	}
}

// TestEndlessRuleIsReported: a rule that never ends is stopped at the
// deadline and reported, while another policy keeps working.
func TestEndlessRuleIsReported(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 100*time.Millisecond)
	pods := createPods(t, ns, "web", 1, c.clock.Now().Add(-time.Hour))
	bad := createPolicy(t, ns, "endless", rulePolicy("web", policytest.Endless))
	spec := rulePolicy("web", annotated)
	spec.Limits.MaxMatchingPercent = new(int32(100))
	good := createPolicy(t, ns, "fine", spec)
	annotate(t, pods[0])
	start := time.Now()
	c.reconcile(t, bad)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("reconcile took %s with a 100ms deadline", took)
	}
	c.reconcile(t, good)
	ready := meta.FindStatusCondition(getPolicy(t, bad).Status.Conditions, v1alpha1.ConditionReady)
	if ready == nil || ready.Reason != v1alpha1.ReasonEvaluationFailed || !strings.Contains(ready.Message, "rule asked failed for 1 pods") || !strings.Contains(ready.Message, "deadline") {
		t.Errorf("Ready of the endless policy: %+v", ready)
	}
	if n := len(requestsOf(t, good)); n != 1 {
		t.Errorf("the other policy created %d requests, want 1", n)
	}
}

// TestInvalidPolicyIsReported: a policy that got past admission (no webhook
// here) is reported through its conditions and does nothing.
func TestInvalidPolicyIsReported(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	createPods(t, ns, "web", 1, c.clock.Now())
	p := createPolicy(t, ns, "broken", v1alpha1.RecreatePolicySpec{
		Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Schedule: &v1alpha1.Schedule{Cron: "61 * * * *"},
		Rules:    []v1alpha1.Rule{{Name: "bad", Rego: "package x\nrecreate contains c if {\n  c := \n}\n"}},
	})
	c.reconcile(t, p)
	status := getPolicy(t, p).Status
	if !meta.IsStatusConditionFalse(status.Conditions, v1alpha1.ConditionScheduleValid) || !meta.IsStatusConditionFalse(status.Conditions, v1alpha1.ConditionReady) {
		t.Errorf("conditions %+v, want ScheduleValid and Ready False", status.Conditions)
	}
	if status.ObservedGeneration != p.Generation {
		t.Errorf("observedGeneration %d, want %d", status.ObservedGeneration, p.Generation)
	}
	fixed := getPolicy(t, p)
	fixed.Spec.Schedule = nil
	if err := admin.Update(context.Background(), fixed); err != nil {
		t.Fatal(err)
	}
	c.reconcile(t, p)
	rules := meta.FindStatusCondition(getPolicy(t, p).Status.Conditions, v1alpha1.ConditionRulesCompiled)
	if rules == nil || rules.Status != metav1.ConditionFalse || rules.Reason != v1alpha1.ReasonCompileError || !strings.Contains(rules.Message, `rule "bad": line 4`) {
		t.Errorf("RulesCompiled %+v, want False naming rule bad at line 4", rules)
	}
}

// createPDB creates a PodDisruptionBudget named app over the pods
// labelled app=app.
func createPDB(t *testing.T, ns, app string, spec policyv1.PodDisruptionBudgetSpec) *policyv1.PodDisruptionBudget {
	t.Helper()
	spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: app}, Spec: spec}
	if err := admin.Create(context.Background(), pdb); err != nil {
		t.Fatal(err)
	}
	return pdb
}

// setPDBStatus plays the disruption controller.
func setPDBStatus(t *testing.T, pdb *policyv1.PodDisruptionBudget, healthy, desired, expected int32) {
	t.Helper()
	pdb.Status = policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: max(healthy-desired, 0), CurrentHealthy: healthy, DesiredHealthy: desired, ExpectedPods: expected, ObservedGeneration: pdb.Generation}
	if err := admin.Status().Update(context.Background(), pdb); err != nil {
		t.Fatal(err)
	}
}

// budgetOfOne creates n pods labelled app=web and a PodDisruptionBudget
// over them that allows one disruption, with the status the disruption
// controller writes while all n are healthy, and returns them with the
// spec of a policy whose rule matches annotated pods and that may act on
// all of them.
func budgetOfOne(t *testing.T, c *testReconciler, ns string, n int) ([]*corev1.Pod, *policyv1.PodDisruptionBudget, v1alpha1.RecreatePolicySpec) {
	t.Helper()
	pods := createPods(t, ns, "web", n, c.clock.Now().Add(-time.Hour))
	pdb := createPDB(t, ns, "web", policyv1.PodDisruptionBudgetSpec{MaxUnavailable: new(intstr.FromInt32(1))})
	setPDBStatus(t, pdb, int32(n), int32(n-1), int32(n))
	spec := rulePolicy("web", annotated)
	spec.Limits.MaxMatchingPercent = new(int32(100))
	return pods, pdb, spec
}

// TestDisruptionBudgetChargesRequestsInFlight: a budget that allows one
// disruption is charged for a pod whose request is in flight but which is
// still Ready (the disruption controller counts it healthy until its
// container stops), across passes: the next pass admits no second pod.
// Seen on the harness cluster: two pods down under a budget of one.
func TestDisruptionBudgetChargesRequestsInFlight(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	pods, _, spec := budgetOfOne(t, c, ns, 4)
	p := createPolicy(t, ns, "guarded", spec)
	for _, pod := range pods {
		annotate(t, pod)
	}
	for range 3 {
		c.reconcile(t, p)
		c.clock.Step(time.Second)
	}
	if n := len(requestsOf(t, p)); n != 1 {
		t.Fatalf("%d requests under a budget of one disruption, want 1", n)
	}
	if !decided(t, p, v1alpha1.OutcomeDisruptionBudget) {
		t.Errorf("no DisruptionBudget decision: %+v", getPolicy(t, p).Status.RecentDecisions)
	}
}
