package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/policy/policytest"
	"github.com/rejuv-dev/rejuv/test/deploy"
)

// onAnnotation recreates the containers of pods annotated
// rejuv.test/recreate=yes.
const onAnnotation = `package e2e
import rego.v1
recreate contains {"container": c.name, "reason": "asked by annotation"} if {
	input.pod.metadata.annotations["rejuv.test/recreate"] == "yes"
	some c in input.containers
}
`

// labelledPods creates n testapp pods labelled app=name and waits for them.
func labelledPods(t *testing.T, ns, name string, n int) []*corev1.Pod {
	t.Helper()
	var pods []*corev1.Pod
	for i := range n {
		p := testappPod(fmt.Sprintf("%s-%d", name, i))
		p.Labels = map[string]string{"app": name}
		pods = append(pods, createPod(t, ns, p))
	}
	return pods
}

func annotatePod(t *testing.T, c client.Client, pod *corev1.Pod) {
	t.Helper()
	patchPod(t, c, pod, func(p *corev1.Pod) { p.Annotations = map[string]string{"rejuv.test/recreate": "yes"} })
}

// patchPod changes the pod as it is now, with a merge patch.
func patchPod(t *testing.T, c client.Client, pod *corev1.Pod, change func(*corev1.Pod)) {
	t.Helper()
	cur := &corev1.Pod{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(pod), cur); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(cur.DeepCopy())
	change(cur)
	if err := c.Patch(context.Background(), cur, patch); err != nil {
		t.Fatal(err)
	}
}

func annotationPolicy(ns, name, app string, change func(*v1alpha1.RecreatePolicySpec)) *v1alpha1.RecreatePolicy {
	p := &v1alpha1.RecreatePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.RecreatePolicySpec{
			Selector:           metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
			Rules:              []v1alpha1.Rule{{Name: "asked", Rego: onAnnotation}},
			EvaluationInterval: &metav1.Duration{Duration: time.Second},
			Rollout:            v1alpha1.Rollout{MaxUnavailable: new(intstr.FromString("100%"))},
			Limits:             v1alpha1.Limits{MaxMatchingPercent: new(int32(100))},
		},
	}
	if change != nil {
		change(&p.Spec)
	}
	return p
}

// waitDecision waits for a decision of the policy that cond accepts.
func waitDecision(t *testing.T, c client.Client, ns, name string, cond func(v1alpha1.Decision) bool) v1alpha1.Decision {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		p := readPolicy(t, c, ns, name)
		for _, d := range p.Status.RecentDecisions {
			if cond(d) {
				return d
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no such decision of %s/%s; decisions %+v", ns, name, p.Status.RecentDecisions)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// TestPolicyInlineRuleOnAnnotation: a custom Rego rule triggers when an
// annotation changes, for that pod only.
func TestPolicyInlineRuleOnAnnotation(t *testing.T) {
	t.Parallel()
	c := rejuvStack(t).Client
	ns := newNamespace(t)
	pods := labelledPods(t, ns, "inline", 2)
	if err := c.Create(context.Background(), annotationPolicy(ns, "inline", "inline", nil)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	if n := len(policyRequests(t, c, ns, "inline")); n != 0 {
		t.Fatalf("%d requests before the annotation", n)
	}
	annotatePod(t, c, pods[1])
	waitPod(t, ns, pods[1].Name, "recreated and Ready", func(p *corev1.Pod) bool {
		return podReady(true)(p) && containerStatus(p, "app").RestartCount == 1
	})
	crrs := policyRequests(t, c, ns, "inline")
	if len(crrs) != 1 || crrs[0].Spec.PodName != pods[1].Name || crrs[0].Labels["rejuv.dev/trigger"] != "rule.asked" {
		t.Fatalf("requests %+v, want one for %s by rule asked", crrs, pods[1].Name)
	}
	other := &corev1.Pod{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(pods[0]), other); err != nil {
		t.Fatal(err)
	}
	if n := containerStatus(other, "app").RestartCount; n != 0 {
		t.Errorf("the pod without the annotation restarted %d times", n)
	}
}

// TestPolicyDryRun: decisions show in status, events and metrics; nothing
// is recreated.
func TestPolicyDryRun(t *testing.T) {
	t.Parallel()
	stack := rejuvStack(t)
	c := stack.Client
	ns := newNamespace(t)
	pods := labelledPods(t, ns, "dry", 1)
	if err := c.Create(context.Background(), annotationPolicy(ns, "dry", "dry", func(s *v1alpha1.RecreatePolicySpec) { s.DryRun = true })); err != nil {
		t.Fatal(err)
	}
	annotatePod(t, c, pods[0])
	waitDecision(t, c, ns, "dry", func(d v1alpha1.Decision) bool { return d.Outcome == v1alpha1.OutcomeDryRun && d.Pod == pods[0].Name })
	time.Sleep(2 * time.Second)
	if n := len(policyRequests(t, c, ns, "dry")); n != 0 {
		t.Errorf("%d requests in dry run", n)
	}
	events := &eventsv1.EventList{}
	if err := c.List(context.Background(), events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range events.Items {
		if e.Reason == "DryRun" && e.Regarding.Kind == "RecreatePolicy" && strings.Contains(e.Note, pods[0].Name) {
			found = true
		}
	}
	if !found {
		t.Errorf("no DryRun event on the policy among %d events", len(events.Items))
	}
	metrics := leaderMetrics(t)
	want := fmt.Sprintf(`rejuv_policy_decisions_total{namespace="%s",outcome="DryRun",policy="dry",trigger="rule"}`, ns)
	if !strings.Contains(metrics, want) {
		t.Errorf("the manager's metrics lack %s:\n%s", want, grepLines(metrics, "rejuv_policy_decisions_total"))
	}
	pod := &corev1.Pod{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(pods[0]), pod); err != nil {
		t.Fatal(err)
	}
	if n := containerStatus(pod, "app").RestartCount; n != 0 {
		t.Errorf("the pod restarted %d times in dry run", n)
	}
}

// TestPolicyLimitsHoldBack: cooldown, maxPerHour and maxMatchingPercent
// each hold a recreation back, saying why.
func TestPolicyLimitsHoldBack(t *testing.T) {
	t.Parallel()
	c := rejuvStack(t).Client
	cases := []struct {
		name     string
		pods     int
		annotate int
		change   func(*v1alpha1.RecreatePolicySpec)
		outcome  v1alpha1.DecisionOutcome
		message  string
		created  int
	}{
		{"cooldown", 1, 1, func(s *v1alpha1.RecreatePolicySpec) { s.Limits.Cooldown = &metav1.Duration{Duration: time.Hour} }, v1alpha1.OutcomeCooldown, "limits.cooldown is 1h0m0s", 1},
		{"max-per-hour", 2, 2, func(s *v1alpha1.RecreatePolicySpec) { s.Limits.MaxPerHour = new(int32(1)) }, v1alpha1.OutcomeRateLimited, "limits.maxPerHour is 1", 1},
		{"max-matching-percent", 2, 2, func(s *v1alpha1.RecreatePolicySpec) { s.Limits.MaxMatchingPercent = new(int32(50)) }, v1alpha1.OutcomeHalted, "over limits.maxMatchingPercent 50%", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := newNamespace(t)
			pods := labelledPods(t, ns, tc.name, tc.pods)
			// Annotated first, so the policy's first evaluation sees every
			// match at once.
			for _, p := range pods[:tc.annotate] {
				annotatePod(t, c, p)
			}
			if err := c.Create(context.Background(), annotationPolicy(ns, tc.name, tc.name, tc.change)); err != nil {
				t.Fatal(err)
			}
			d := waitDecision(t, c, ns, tc.name, func(d v1alpha1.Decision) bool { return d.Outcome == tc.outcome })
			if !strings.Contains(d.Message, tc.message) {
				t.Errorf("decision %+v, want a message with %q", d, tc.message)
			}
			time.Sleep(3 * time.Second)
			if n := len(policyRequests(t, c, ns, tc.name)); n != tc.created {
				t.Errorf("%d requests, want %d", n, tc.created)
			}
		})
	}
}

// TestPolicyRespectsDisruptionBudget: a PodDisruptionBudget that allows no
// disruption holds the recreation back until it allows one.
func TestPolicyRespectsDisruptionBudget(t *testing.T) {
	t.Parallel()
	c := rejuvStack(t).Client
	ctx := context.Background()
	ns := newNamespace(t)
	pods := labelledPods(t, ns, "budget", 2)
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "budget"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: new(intstr.FromInt32(2)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "budget"}}},
	}
	if err := c.Create(ctx, pdb); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, annotationPolicy(ns, "budget", "budget", nil)); err != nil {
		t.Fatal(err)
	}
	annotatePod(t, c, pods[0])
	waitDecision(t, c, ns, "budget", func(d v1alpha1.Decision) bool { return d.Outcome == v1alpha1.OutcomeDisruptionBudget })
	if n := len(policyRequests(t, c, ns, "budget")); n != 0 {
		t.Fatalf("%d requests while the budget allows no disruption", n)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(pdb), pdb); err != nil {
		t.Fatal(err)
	}
	pdb.Spec.MinAvailable = new(intstr.FromInt32(1))
	if err := c.Update(ctx, pdb); err != nil {
		t.Fatal(err)
	}
	waitPod(t, ns, pods[0].Name, "recreated once the budget allows it", func(p *corev1.Pod) bool {
		return podReady(true)(p) && containerStatus(p, "app").RestartCount == 1
	})
}

// TestPolicyRunawayRulesReported: a rule that never ends is stopped by the
// deadline, and a rule that keeps what it builds by the memory bound; once
// stopped in three evaluations in a row, each halts its policy, which says
// why; another policy keeps working, and the manager that evaluates them
// is not restarted (its memory limit is 256 MiB; the greedy rule would
// build 10 GB).
func TestPolicyRunawayRulesReported(t *testing.T) {
	t.Parallel()
	s := rejuvStack(t)
	c := s.Client
	ctx := context.Background()
	leader, err := s.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(t)
	pods := labelledPods(t, ns, "loop", 1)
	for name, rule := range map[string]string{"endless": policytest.Endless, "greedy": policytest.Greedy} {
		p := annotationPolicy(ns, name, "loop", func(s *v1alpha1.RecreatePolicySpec) {
			s.Rules = []v1alpha1.Rule{{Name: "runaway", Rego: rule}}
			s.EvaluationInterval = &metav1.Duration{Duration: 5 * time.Second}
		})
		if err := c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Create(ctx, annotationPolicy(ns, "working", "loop", nil)); err != nil {
		t.Fatal(err)
	}
	annotatePod(t, c, pods[0])
	waitPod(t, ns, pods[0].Name, "recreated by the working policy", func(p *corev1.Pod) bool {
		return podReady(true)(p) && containerStatus(p, "app").RestartCount == 1
	})
	// Each halts its policy, saying what stopped it. The greedy rule
	// reaches its memory bound in tens of milliseconds, a few times
	// faster than the deadline; but a machine loaded enough can slow it
	// past the deadline, which stops it as well: then its spec is changed
	// (which lets the rules be evaluated again) and it is watched again,
	// a few times at most.
	for name, stop := range map[string]string{"endless": "evaluation stopped at the deadline", "greedy": "evaluation stopped at the memory bound"} {
		var halted *metav1.Condition
		for attempt := 1; ; attempt++ {
			generation := readPolicy(t, c, ns, name).Generation
			waitWithin(t, "policy "+name+" halted by the sandbox", time.Minute, func() bool {
				halted = meta.FindStatusCondition(readPolicy(t, c, ns, name).Status.Conditions, v1alpha1.ConditionHalted)
				return halted != nil && halted.Status == metav1.ConditionTrue && halted.ObservedGeneration >= generation
			})
			deadline := strings.Contains(halted.Message, "evaluation stopped at the deadline")
			if name != "greedy" || !deadline || attempt == 4 {
				break
			}
			t.Logf("policy greedy, attempt %d: stopped at the deadline before its memory bound on this machine (%s); its spec changed to evaluate it again", attempt, halted.Message)
			p := readPolicy(t, c, ns, name)
			p.Spec.EvaluationInterval = &metav1.Duration{Duration: time.Duration(5+attempt) * time.Second}
			if err := c.Update(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		if halted.Reason != v1alpha1.ReasonRuleStopped || !strings.Contains(halted.Message, `the sandbox stopped rule "runaway" for pod `+ns+`/`) || !strings.Contains(halted.Message, stop) {
			t.Errorf("policy %s: Halted %s: %s, want %s naming the rule, the pod and %q", name, halted.Reason, halted.Message, v1alpha1.ReasonRuleStopped, stop)
		}
	}
	// A few more passes of the working policy (every 5 s).
	time.Sleep(10 * time.Second)
	after, err := s.Kube.CoreV1().Pods(leader.Namespace).Get(ctx, leader.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the manager that evaluated the rules: %v", err)
	}
	if after.UID != leader.UID || containerStatus(after, "manager").RestartCount != containerStatus(leader, "manager").RestartCount {
		t.Errorf("the manager %s was restarted while it evaluated the runaway rules: %+v", leader.Name, containerStatus(after, "manager"))
	}
}

// TestPolicyOnlyLeaderActs: of the manager's two installed replicas, the
// one holding the lease acts; the other serves webhooks and waits for the
// lease, running no controller but the readiness gate's (which gives new
// gated pods their condition whether or not a replica leads).
func TestPolicyOnlyLeaderActs(t *testing.T) {
	t.Parallel()
	s := rejuvStack(t)
	ctx := context.Background()
	c := s.Client
	ns := newNamespace(t)
	pods := labelledPods(t, ns, "leader", 1)
	if err := c.Create(ctx, annotationPolicy(ns, "leader", "leader", nil)); err != nil {
		t.Fatal(err)
	}
	annotatePod(t, c, pods[0])
	waitPod(t, ns, pods[0].Name, "recreated by the leader", func(p *corev1.Pod) bool {
		return podReady(true)(p) && containerStatus(p, "app").RestartCount == 1
	})
	leader, err := s.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	replicas, err := s.Pods(ctx, deploy.HealerSelector)
	if err != nil {
		t.Fatal(err)
	}
	if len(replicas) != 2 {
		t.Fatalf("%d manager replicas, want the 2 installed", len(replicas))
	}
	for _, p := range replicas {
		if p.Name == leader.Name {
			continue
		}
		lower := strings.ToLower(podLog(t, p.Name, false))
		if !strings.Contains(lower, "attempting to acquire leader lease") {
			t.Errorf("the replica %s does not wait for the lease:\n%s", p.Name, deploy.TailLines(lower, 20))
		}
		gate := false
		for line := range strings.SplitSeq(lower, "\n") {
			if !strings.Contains(line, "starting workers") {
				continue
			}
			if strings.Contains(line, `"controller":"pod-readiness-gate"`) {
				gate = true
				continue
			}
			t.Errorf("the replica %s runs a controller beside the leader %s: %s", p.Name, leader.Name, line)
		}
		if strings.Contains(lower, "successfully acquired lease") {
			t.Errorf("the replica %s took the lease beside the leader %s:\n%s", p.Name, leader.Name, deploy.TailLines(lower, 20))
		}
		if !gate {
			t.Errorf("the replica %s does not run the readiness gate's controller:\n%s", p.Name, deploy.TailLines(lower, 20))
		}
	}
	if n := len(policyRequests(t, c, ns, "leader")); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}
