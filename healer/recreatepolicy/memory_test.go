package recreatepolicy

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/api/meta"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/policy"
)

// fakeMemory is a working set history by pod name.
type fakeMemory map[string]*policy.MemoryWindow

const noMetrics = `metrics.k8s.io: list the pod metrics of namespace x: the server could not find the requested resource`

func (f fakeMemory) Memory(pod *corev1.Pod, _ string) (*policy.MemoryWindow, string) {
	if w := f[pod.Name]; w != nil {
		return w, ""
	}
	return nil, noMetrics
}

func (fakeMemory) Describe() string { return "windows of 1h sampled every 30s from metrics.k8s.io" }

// leakPolicy selects app=web with memory-leak judging from 10 minutes and
// five samples, every pod of it allowed to be unavailable.
func leakPolicy() v1alpha1.RecreatePolicySpec {
	return v1alpha1.RecreatePolicySpec{
		Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Rules: []v1alpha1.Rule{{Name: "leak", Builtin: "memory-leak", Parameters: map[string]apiextensionsv1.JSON{
			"minObservation": {Raw: []byte(`"10m"`)}, "minSamples": {Raw: []byte(`5`)},
		}}},
		Rollout: v1alpha1.Rollout{MaxUnavailable: new(intstr.FromString("100%"))},
	}
}

// TestMemoryRulesReadTheHistory: the memory-leak rule recreates the pod
// whose window shows steady growth, and the policy's status says why the
// others could not be judged: no window (with what the source answered),
// or one too short.
func TestMemoryRulesReadTheHistory(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	pods := createPods(t, ns, "web", 3, c.clock.Now().Add(-time.Hour))
	const mib = 1 << 20
	c.Memory = fakeMemory{
		pods[0].Name: {WorkingSetBytes: 300 * mib, Samples: 20, WindowSeconds: 600, SlopeBytesPerSecond: 100 * mib / 3600.0, R2: 0.98,
			StartSlopeBytesPerSecond: 100 * mib / 3600.0, EndSlopeBytesPerSecond: 90 * mib / 3600.0, LatestSlopeBytesPerSecond: 95 * mib / 3600.0},
		pods[2].Name: {WorkingSetBytes: 100 * mib, Samples: 2, WindowSeconds: 60, SlopeBytesPerSecond: 1, R2: 1},
	}
	p := createPolicy(t, ns, "leaks", leakPolicy())
	c.reconcile(t, p)
	crrs := requestsOf(t, p)
	if len(crrs) != 1 || crrs[0].Spec.PodName != pods[0].Name {
		t.Fatalf("requests %v, want one for %s", crrs, pods[0].Name)
	}
	if reason := crrs[0].Annotations["rejuv.dev/reason"]; !strings.Contains(reason, "grows 100Mi/h (r2 0.98 over 10m") {
		t.Errorf("the request's reason %q does not say how fast the working set grew", reason)
	}
	got := getPolicy(t, p).Status.NoData
	want := []v1alpha1.RuleNoData{
		{Rule: "leak", Signal: "memory", Pods: 1, Reason: noMetrics},
		{Rule: "leak", Signal: "memory.history", Pods: 1,
			Reason: "the window holds 2 samples over 1m; the manager keeps windows of 1h sampled every 30s from metrics.k8s.io"},
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("status.noData\n got %+v\nwant %+v", got, want)
	}
}

// Without a memory source, the memory rules have no data, and the status
// says the manager samples none.
func TestMemoryRulesWithoutASource(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	createPods(t, ns, "web", 1, c.clock.Now().Add(-time.Hour))
	p := createPolicy(t, ns, "near", v1alpha1.RecreatePolicySpec{
		Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Rules:    []v1alpha1.Rule{{Name: "near", Builtin: "memory-near-limit"}},
		Rollout:  v1alpha1.Rollout{MaxUnavailable: new(intstr.FromString("100%"))},
	})
	c.reconcile(t, p)
	if n := len(requestsOf(t, p)); n != 0 {
		t.Fatalf("%d requests without memory data", n)
	}
	var memory *v1alpha1.RuleNoData
	for _, nd := range getPolicy(t, p).Status.NoData {
		if nd.Signal == "memory" {
			memory = &nd
		}
	}
	if memory == nil || memory.Pods != 1 || !strings.Contains(memory.Reason, "--memory-source=none") {
		t.Errorf("status.noData's memory entry is %+v, want 1 pod and a reason naming --memory-source=none", memory)
	}
}

func TestDurationText(t *testing.T) {
	for sec, want := range map[float64]string{60: "1m", 3600: "1h", 90: "1m30s", 5400: "1h30m", 45: "45s", 3661: "1h1m1s"} {
		if got := durationText(sec); got != want {
			t.Errorf("durationText(%g) = %q, want %q", sec, got, want)
		}
	}
}

// TestRecurringLeakIsReportedNotRecreated: the memory rule recreates a
// leaking container; when it matches the next container again within
// limits.memoryRecurrence, the policy holds it back (outcome Recurring),
// sets MemoryRecurring naming the pod, warns once on the pod and the
// policy, and counts the hold; with memoryRecurrence 0 it recreates again.
func TestRecurringLeakIsReportedNotRecreated(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	pods := createPods(t, ns, "web", 2, c.clock.Now().Add(-time.Hour))
	const mib = 1 << 20
	growing := &policy.MemoryWindow{WorkingSetBytes: 300 * mib, Samples: 20, WindowSeconds: 600, SlopeBytesPerSecond: 100 * mib / 3600.0, R2: 0.98,
		StartSlopeBytesPerSecond: 100 * mib / 3600.0, EndSlopeBytesPerSecond: 100 * mib / 3600.0, LatestSlopeBytesPerSecond: 100 * mib / 3600.0}
	c.Memory = fakeMemory{pods[0].Name: growing}
	p := createPolicy(t, ns, "leaks", leakPolicy())
	c.reconcile(t, p)
	crrs := requestsOf(t, p)
	if len(crrs) != 1 {
		t.Fatalf("%d requests, want the leak's one", len(crrs))
	}
	c.clock.Step(time.Minute)
	complete(t, c, &crrs[0], true)

	// 40 minutes on: past the cooldown (30m), within the recurrence (2h),
	// and the next container grows the same way.
	c.clock.Step(40 * time.Minute)
	warned(c, "", "") // the first recreation's events
	c.reconcile(t, p)
	got := getPolicy(t, p)
	if n := len(requestsOf(t, p)); n != 1 {
		t.Fatalf("%d requests after the leak came back, want still 1", n)
	}
	d := got.Status.RecentDecisions[0]
	if d.Outcome != v1alpha1.OutcomeRecurring || d.Pod != pods[0].Name || !strings.Contains(d.Message, "limits.memoryRecurrence 2h0m0s") || !strings.Contains(d.Message, "after rule leak recreated it") {
		t.Errorf("latest decision %+v, want Recurring for %s saying when and by which rule", d, pods[0].Name)
	}
	cond := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionMemoryRecurring)
	if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != v1alpha1.ReasonLeakRecurred || !strings.Contains(cond.Message, pods[0].Name+" (app, rule/leak)") {
		t.Errorf("MemoryRecurring condition %+v, want True naming %s", cond, pods[0].Name)
	}
	if seen, ok := warned(c, "MemoryRecurring", "RecreatePolicy leaks holds back app"); !ok {
		t.Errorf("no Warning MemoryRecurring on the pod; events: %s", seen)
	}
	if got := testutil.ToFloat64(heldBack.WithLabelValues(p.Name, ns, string(v1alpha1.OutcomeRecurring))); got != 1 {
		t.Errorf("rejuv_policy_held_back{gate=Recurring} is %v, want 1", got)
	}

	// The next pass holds it back again, without warning again.
	c.clock.Step(30 * time.Second)
	c.reconcile(t, p)
	if getPolicy(t, p).Status.RecentDecisions[0].Outcome != v1alpha1.OutcomeRecurring {
		t.Errorf("second pass: %+v, want Recurring", getPolicy(t, p).Status.RecentDecisions[0])
	}
	if seen, ok := warned(c, "MemoryRecurring", ""); ok {
		t.Errorf("warned again at the second pass that held the pod back: %s", seen)
	}

	// A policy that asks for every recreation gets it.
	got = getPolicy(t, p)
	got.Spec.Limits.MemoryRecurrence = &metav1.Duration{}
	if err := admin.Update(context.Background(), got); err != nil {
		t.Fatal(err)
	}
	c.clock.Step(30 * time.Second)
	c.reconcile(t, got)
	got = getPolicy(t, p)
	if n := len(requestsOf(t, p)); n != 2 || got.Status.RecentDecisions[0].Outcome != v1alpha1.OutcomeCreated {
		t.Errorf("memoryRecurrence 0: %d requests, latest decision %+v; want a second request", n, got.Status.RecentDecisions[0])
	}
	if meta.IsStatusConditionTrue(got.Status.Conditions, v1alpha1.ConditionMemoryRecurring) {
		t.Errorf("MemoryRecurring still True once nothing is held back: %+v", got.Status.Conditions)
	}
}
