package recreatepolicy

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

func TestStatusWritesNeeded(t *testing.T) {
	now := time.Date(2026, 11, 27, 3, 0, 30, 0, time.UTC)
	at := func(ago time.Duration) *metav1.Time { return &metav1.Time{Time: now.Add(-ago).Truncate(time.Second)} }
	read := func(rv string, evaluated *metav1.Time, selected int32) *v1alpha1.RecreatePolicy {
		p := &v1alpha1.RecreatePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "heal", ResourceVersion: rv}}
		p.Status.LastEvaluationTime, p.Status.SelectedPods = evaluated, selected
		return p
	}
	const interval = 30 * time.Second
	for _, tc := range []struct {
		name       string
		written    string // the resourceVersion of the pass's last write; "" for none
		original   *v1alpha1.RecreatePolicy
		evaluated  *metav1.Time
		selected   int32
		want       bool
		wantStatus *metav1.Time
	}{
		{"nothing changed", "", read("7", at(10*time.Second), 3), at(10 * time.Second), 3, false, at(10 * time.Second)},
		{"only the time, within an interval", "7", read("7", at(10*time.Second), 3), at(0), 3, false, at(10 * time.Second)},
		{"only the time, an interval old", "7", read("7", at(interval), 3), at(0), 3, true, at(0)},
		{"the time and the selected pods", "7", read("7", at(10*time.Second), 3), at(0), 4, true, at(0)},
		{"the first evaluation", "", read("7", nil, 3), at(0), 3, true, at(0)},
		{"the cache behind the last write", "8", read("7", at(10*time.Second), 3), at(10 * time.Second), 3, true, at(10 * time.Second)},
		{"after a manager's start, nothing changed", "", read("7", at(10*time.Second), 3), at(0), 3, false, at(10 * time.Second)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s state
			if tc.written != "" {
				s.wrote(read(tc.written, nil, 0))
			}
			p := tc.original.DeepCopy()
			p.Status.LastEvaluationTime, p.Status.SelectedPods = tc.evaluated, tc.selected
			if got := statusWriteNeeded(s.lastWrite(types.NamespacedName{Namespace: "shop", Name: "heal"}), tc.original, p, interval, now); got != tc.want {
				t.Errorf("write needed: %v, want %v", got, tc.want)
			}
			if got := p.Status.LastEvaluationTime; !got.Equal(tc.wantStatus) {
				t.Errorf("lastEvaluationTime %v, want %v", got, tc.wantStatus)
			}
		})
	}
}

// A policy deleted and created again under its name starts afresh: its
// new resourceVersions are not taken for a cache behind the old one's
// writes.
func TestStatusWritesForget(t *testing.T) {
	var s state
	key := types.NamespacedName{Namespace: "shop", Name: "heal"}
	old := &v1alpha1.RecreatePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "heal", ResourceVersion: "8"}}
	s.wrote(old)
	s.forget(key)
	again := &v1alpha1.RecreatePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "heal", ResourceVersion: "12"}}
	if statusWriteNeeded(s.lastWrite(key), again, again.DeepCopy(), time.Minute, time.Now()) {
		t.Error("an unchanged status of the policy created again is written")
	}
}

// TestPassesThatChangeNothingWriteNothing: in a busy namespace every pod's
// change starts a pass. A pass that changes no decision and nothing of the
// status but the evaluation's time leaves the policy alone, until that
// time is one evaluation interval old; a pass with a decision writes at
// once.
func TestPassesThatChangeNothingWriteNothing(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	pods := createPods(t, ns, "web", 3, c.clock.Now().Add(-time.Hour))
	p := createPolicy(t, ns, "custom", rulePolicy("web", annotated))
	c.reconcile(t, p)
	first := getPolicy(t, p)
	if first.Status.LastEvaluationTime == nil || first.Status.SelectedPods != 3 {
		t.Fatalf("premise: the first pass wrote no evaluation: %+v", first.Status)
	}
	passes := passCount(t, p)

	// Pods change (an annotation the rule does not ask for) and passes run
	// within the interval (30 s).
	for i := range 5 {
		patch := client.MergeFrom(pods[i%3].DeepCopy())
		pods[i%3].Annotations = map[string]string{"rejuv.test/other": fmt.Sprint(i)}
		if err := admin.Patch(context.Background(), pods[i%3], patch); err != nil {
			t.Fatal(err)
		}
		c.clock.Step(5 * time.Second)
		c.reconcile(t, p)
	}
	if n := passCount(t, p) - passes; n != 5*3 {
		t.Fatalf("premise: %v pods evaluated in the five passes, want 15", n)
	}
	if got := getPolicy(t, p); got.ResourceVersion != first.ResourceVersion {
		t.Errorf("passes that changed nothing wrote the policy: resourceVersion %s, was %s; status %+v", got.ResourceVersion, first.ResourceVersion, got.Status)
	}

	// An interval after the written evaluation, the time is written.
	c.clock.Step(5 * time.Second)
	c.reconcile(t, p)
	got := getPolicy(t, p)
	if got.ResourceVersion == first.ResourceVersion || !got.Status.LastEvaluationTime.Time.Equal(c.clock.Now()) {
		t.Errorf("30 s after the last written evaluation, lastEvaluationTime %v, want %v (resourceVersion %s, was %s)",
			got.Status.LastEvaluationTime, c.clock.Now(), got.ResourceVersion, first.ResourceVersion)
	}

	// A decision is written at once, with the pass's time.
	annotate(t, pods[0])
	c.clock.Step(time.Second)
	c.reconcile(t, p)
	decided := getPolicy(t, p)
	if decided.ResourceVersion == got.ResourceVersion || len(decided.Status.RecentDecisions) == 0 || !decided.Status.LastEvaluationTime.Time.Equal(c.clock.Now()) {
		t.Errorf("the pass that decided did not write its decision and time: %+v", decided.Status)
	}
}

// passCount is how many pods the policy's rules were evaluated for, over
// all results.
func passCount(t *testing.T, p *v1alpha1.RecreatePolicy) float64 {
	t.Helper()
	n := 0.0
	for _, result := range []string{"match", "no_match", "no_data", "error"} {
		n += testutil.ToFloat64(evaluations.WithLabelValues(p.Name, p.Namespace, result))
	}
	return n
}

// A candidate held back at every evaluation, its message counting the
// time since the last recreation, keeps one decision, the newest, and
// the recreation before it stays in the list.
func TestRepeatedHoldsReplaceEachOther(t *testing.T) {
	var list []v1alpha1.Decision
	for _, dec := range []v1alpha1.Decision{
		{Pod: "a", Trigger: "rule/near", Outcome: v1alpha1.OutcomeCreated, Request: "near-1"},
		{Pod: "a", Trigger: "rule/near", Outcome: v1alpha1.OutcomeCooldown, Message: "container app was recreated 1s ago"},
		{Pod: "b", Trigger: "rule/near", Outcome: v1alpha1.OutcomeCooldown, Message: "container app was recreated 5s ago"},
		{Pod: "a", Trigger: "rule/near", Outcome: v1alpha1.OutcomeCooldown, Message: "container app was recreated 2s ago"},
		{Pod: "a", Trigger: "rule/near", Outcome: v1alpha1.OutcomeCooldown, Message: "container app was recreated 3s ago"},
	} {
		list = prepend(list, dec)
	}
	want := []string{"a Cooldown container app was recreated 3s ago", "b Cooldown container app was recreated 5s ago", "a Created "}
	if len(list) != len(want) {
		t.Fatalf("%d decisions %+v, want %d", len(list), list, len(want))
	}
	for i, w := range want {
		if got := list[i].Pod + " " + string(list[i].Outcome) + " " + list[i].Message; got != w {
			t.Errorf("decision %d: %q, want %q", i, got, w)
		}
	}
	// Two recreations are both kept.
	list = prepend(list, v1alpha1.Decision{Pod: "a", Trigger: "rule/near", Outcome: v1alpha1.OutcomeCreated, Request: "near-2"})
	if list[0].Request != "near-2" || len(list) != 4 {
		t.Errorf("a second recreation: %+v", list)
	}
}

// A pass of a run over many pods has far more decisions than the status
// keeps: cutting the list on each prepend keeps exactly what cutting it
// once at the end would.
func TestFlushKeepsTheSameDecisionsAsCuttingOnceAtTheEnd(t *testing.T) {
	outcomes := []v1alpha1.DecisionOutcome{v1alpha1.OutcomeCreated, v1alpha1.OutcomeUnavailable, v1alpha1.OutcomeCooldown}
	var earlier, pass []v1alpha1.Decision
	for i := range 30 {
		earlier = append(earlier, v1alpha1.Decision{Pod: fmt.Sprintf("p%d", i%7), Trigger: "schedule", Outcome: outcomes[i%3], Message: fmt.Sprintf("earlier %d", i)})
	}
	earlier = earlier[:v1alpha1.MaxRecentDecisions]
	for i := range 1000 {
		pass = append(pass, v1alpha1.Decision{Pod: fmt.Sprintf("p%d", i%37), Trigger: "schedule", Outcome: outcomes[(i/37)%3], Message: fmt.Sprintf("pass %d", i)})
	}
	want := slices.Clone(earlier)
	for _, dec := range pass {
		want = prepend(want, dec)
	}
	want = want[:v1alpha1.MaxRecentDecisions]

	p := &v1alpha1.RecreatePolicy{Status: v1alpha1.RecreatePolicyStatus{RecentDecisions: slices.Clone(earlier)}}
	flush(p, pass)
	if !slices.EqualFunc(p.Status.RecentDecisions, want, func(a, b v1alpha1.Decision) bool { return a.Message == b.Message }) {
		t.Fatalf("kept %v, want %v", messages(p.Status.RecentDecisions), messages(want))
	}
}

func messages(ds []v1alpha1.Decision) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Message
	}
	return out
}
