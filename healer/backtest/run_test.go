package backtest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/workingset"
)

const mi = 1 << 20

var t0 = time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)

// recorded is history held in memory: pods and their samples.
type recorded struct {
	pods    []Pod
	samples map[ContainerRef][]workingset.Sample
	// reads counts the working set reads, longest is the longest span
	// one asked for.
	reads   int
	longest time.Duration
}

func (r *recorded) Pods(_ context.Context, namespace string, sel labels.Selector, from, to time.Time) ([]Pod, Coverage, error) {
	var out []Pod
	for _, p := range r.pods {
		if p.Pod.Namespace == namespace && sel.Matches(labels.Set(p.Pod.Labels)) && p.From.Before(to) && (p.To.IsZero() || p.To.After(from)) {
			out = append(out, p)
		}
	}
	return out, Coverage{}, nil
}

func (r *recorded) WorkingSet(_ context.Context, _ string, pods []string, from, to time.Time) (map[ContainerRef][]workingset.Sample, error) {
	r.reads++
	r.longest = max(r.longest, to.Sub(from))
	out := map[ContainerRef][]workingset.Sample{}
	for ref, list := range r.samples {
		if !slices.Contains(pods, ref.Pod) {
			continue
		}
		for _, s := range list {
			if s.Time.After(from) && !s.Time.After(to) {
				out[ref] = append(out[ref], s)
			}
		}
	}
	return out, nil
}

// app records a pod named name with one container app (limit 512Mi) over
// [t0, t0+span), sampled every 30 s: bytes gives its working set at an
// age of its instance; an instance whose working set reaches the limit
// is killed, the next starting at once.
func (r *recorded) app(name string, span time.Duration, bytes func(age time.Duration) int64) {
	const limit = 512 * mi
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID("uid-" + name), Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: *resource.NewQuantity(limit, resource.BinarySI)}}}}},
	}
	instances := []Instance{{ID: name + "-0", Started: t0}}
	if r.samples == nil {
		r.samples = map[ContainerRef][]workingset.Sample{}
	}
	ref := ContainerRef{Pod: name, Container: "app"}
	for at := t0.Add(5 * time.Second); at.Before(t0.Add(span)); {
		cur := &instances[len(instances)-1]
		b := bytes(at.Sub(cur.Started))
		if b >= limit {
			cur.Ended, cur.Reason, cur.ExitCode = at, OOMKilled, 137
			instances = append(instances, Instance{ID: fmt.Sprintf("%s-%d", name, len(instances)), Started: at})
			continue
		}
		r.samples[ref] = append(r.samples[ref], workingset.Sample{Pod: name, Container: "app", ContainerID: cur.ID, Time: at, Bytes: b})
		at = at.Add(30 * time.Second)
	}
	r.pods = append(r.pods, Pod{Pod: pod, From: t0, To: t0.Add(span), Containers: []Container{{Name: "app", Instances: instances}}})
}

// leaking grows perHour from 100Mi.
func leaking(perHour int64) func(time.Duration) int64 {
	return func(age time.Duration) int64 { return 100*mi + int64(float64(perHour)*age.Hours()) }
}

func flat(time.Duration) int64 { return 200 * mi }

// leakPolicy selects app=web with memory-leak at its defaults, and limits.
func leakPolicy(limits v1alpha1.Limits) *v1alpha1.RecreatePolicy {
	return &v1alpha1.RecreatePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "leaks", UID: "policy-uid"},
		Spec: v1alpha1.RecreatePolicySpec{
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Rules:    []v1alpha1.Rule{{Name: "leak", Builtin: "memory-leak"}},
			Limits:   limits,
		},
	}
}

func run(t *testing.T, p *v1alpha1.RecreatePolicy, h *recorded, span time.Duration) *Report {
	t.Helper()
	report, err := Run(context.Background(), p, h, t0, t0.Add(span), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return report
}

func TestALeakIsCaughtBeforeTheKernelKillsIt(t *testing.T) {
	h := &recorded{}
	// 200Mi/h from 100Mi reaches the limit, 512Mi, after 2h4m; the
	// recorded instance was killed then.
	h.app("leaky", 3*time.Hour, leaking(200*mi))
	h.app("steady", 3*time.Hour, flat)
	h.app("steady-2", 3*time.Hour, flat)
	r := run(t, leakPolicy(v1alpha1.Limits{}), h, 3*time.Hour)

	if r.Pods != 3 || r.Containers != 3 {
		t.Errorf("the report counts %d pods and %d containers; want 3 and 3", r.Pods, r.Containers)
	}
	if len(r.Results) != 1 || r.Results[0].Pod != "leaky" {
		t.Fatalf("results %+v; want the leaky pod's alone", r.Results)
	}
	res := r.Results[0]
	if len(res.Kills) != 1 || !res.Kills[0].Caught || res.Kills[0].LeadTime == nil {
		t.Fatalf("kills %+v; want the one kill, caught", res.Kills)
	}
	kill := res.Kills[0]
	if kill.At.Sub(t0) < 2*time.Hour || kill.At.Sub(t0) > 2*time.Hour+5*time.Minute {
		t.Errorf("the kill at %s; the premise is 2h4m after the start", kill.At.Sub(t0))
	}
	// The rule judges after its hour of observation: about an hour before
	// the kill.
	if lead := kill.LeadTime.Duration; lead < 55*time.Minute || lead > 65*time.Minute {
		t.Errorf("lead time %s; want about an hour", lead)
	}
	// The same instance is found again an hour after its recreation (the
	// recorded working set goes on growing): memoryRecurrence (2h) holds
	// it back.
	if len(res.Recreations) != 1 || !res.Recreations[0].Needed || res.Recreations[0].Rule != "leak" {
		t.Errorf("recreations %+v; want one, needed, by rule leak", res.Recreations)
	}
	if rec := res.Recreations[0]; rec.WorkingSetBytes < 290*mi || rec.WorkingSetBytes > 310*mi || rec.Age.Duration != rec.At.Sub(t0) {
		t.Errorf("the recreation at %s, age %s, working set %dMi; want about 300Mi, its age since the start", rec.At.Sub(t0), rec.Age.Duration, rec.WorkingSetBytes/mi)
	}
	if r.Held[string(v1alpha1.OutcomeRecurring)] == 0 {
		t.Errorf("held %v; want the recurrence held back", r.Held)
	}
	want := Summary{Recreations: 1, Kills: 1, Caught: 1}
	if r.Summary != want {
		t.Errorf("summary %+v; want %+v", r.Summary, want)
	}
}

func TestARecreationNoKillFollowedIsUnneeded(t *testing.T) {
	h := &recorded{}
	// 60Mi/h from 100Mi never reaches the limit in 3 hours.
	h.app("slow", 3*time.Hour, leaking(60*mi))
	h.app("steady", 3*time.Hour, flat)
	h.app("steady-2", 3*time.Hour, flat)
	r := run(t, leakPolicy(v1alpha1.Limits{}), h, 3*time.Hour)
	want := Summary{Recreations: 1, Unneeded: 1}
	if r.Summary != want {
		t.Errorf("summary %+v; want %+v (results %+v)", r.Summary, want, r.Results)
	}
}

func TestAKillWithoutARecreationIsMissed(t *testing.T) {
	h := &recorded{}
	// 600Mi/h reaches the limit within 42 minutes, before an hour of
	// observation; the next instance is caught by the history the first
	// left (oomLifetimeFraction).
	h.app("fast", 2*time.Hour, leaking(600*mi))
	h.app("steady", 2*time.Hour, flat)
	h.app("steady-2", 2*time.Hour, flat)
	r := run(t, leakPolicy(v1alpha1.Limits{}), h, 2*time.Hour)
	if len(r.Results) != 1 {
		t.Fatalf("results %+v; want the fast pod's", r.Results)
	}
	kills := r.Results[0].Kills
	if len(kills) < 2 || kills[0].Caught || !kills[1].Caught {
		t.Errorf("kills %+v; want the first missed and the second caught", kills)
	}
	if r.Summary.Missed != 1 || r.Summary.Caught != len(kills)-1 {
		t.Errorf("summary %+v; want one kill missed and the others caught", r.Summary)
	}
}

func TestTheRateLimitHoldsAcrossPasses(t *testing.T) {
	h := &recorded{}
	for i := range 4 {
		h.app(fmt.Sprintf("leaky-%d", i), 4*time.Hour, leaking(150*mi))
	}
	perHour := int32(1)
	r := run(t, leakPolicy(v1alpha1.Limits{MaxPerHour: &perHour, MaxMatchingPercent: new(int32(100))}), h, 4*time.Hour)
	var at []time.Time
	for _, res := range r.Results {
		for _, rec := range res.Recreations {
			at = append(at, rec.At)
		}
	}
	slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) })
	if len(at) < 2 {
		t.Fatalf("recreations at %v; the premise is that the leaks are found again and again", at)
	}
	for i := 1; i < len(at); i++ {
		if at[i].Sub(at[i-1]) < time.Hour {
			t.Errorf("recreations at %s and %s: two within an hour, limits.maxPerHour is 1", at[i-1].Sub(t0), at[i].Sub(t0))
		}
	}
	if r.Held[string(v1alpha1.OutcomeRateLimited)] == 0 {
		t.Errorf("held %v; want candidates held back by the rate", r.Held)
	}
}

func TestTheBlastRadiusHaltsTheReplay(t *testing.T) {
	h := &recorded{}
	for i := range 3 {
		h.app(fmt.Sprintf("leaky-%d", i), 3*time.Hour, leaking(150*mi))
	}
	h.app("steady", 3*time.Hour, flat)
	r := run(t, leakPolicy(v1alpha1.Limits{}), h, 3*time.Hour)
	if r.Summary.Recreations != 0 || r.Held[string(v1alpha1.OutcomeHalted)] == 0 {
		t.Errorf("summary %+v, held %v; want no recreation, the rules matching 3 of 4 pods held back by maxMatchingPercent 50", r.Summary, r.Held)
	}
}

func TestHistoryIsReadChunkByChunk(t *testing.T) {
	h := &recorded{}
	h.app("steady", 6*time.Hour, flat)
	if _, err := Run(context.Background(), leakPolicy(v1alpha1.Limits{}), h, t0.Add(time.Hour), t0.Add(6*time.Hour), Options{Chunk: time.Hour}); err != nil {
		t.Fatal(err)
	}
	// Five hours and the window's hour before, an hour and two intervals
	// at a time.
	if h.reads != 6 || h.longest != time.Hour+time.Minute {
		t.Errorf("%d reads, the longest of %s; want 6 reads of at most 1h1m", h.reads, h.longest)
	}
}

func TestRulesOnWhatHistoryLacksAreNamed(t *testing.T) {
	p := leakPolicy(v1alpha1.Limits{})
	p.Spec.Rules = append(p.Spec.Rules,
		v1alpha1.Rule{Name: "stuck", Builtin: "stuck-readiness"},
		v1alpha1.Rule{Name: "queue", Rego: "package q\nrecreate contains {\"container\": \"app\"} if input.signals.queue > 10\n"})
	notes := notReplayed(p, false)
	if len(notes) != 2 || notes[0].Rule != "stuck" || notes[1].Rule != "queue" {
		t.Errorf("not replayed %+v; want stuck (readiness) and queue (signals)", notes)
	}
	p.Spec.Rules = append(p.Spec.Rules, v1alpha1.Rule{Name: "startup", Builtin: "stuck-startup"})
	notes = notReplayed(p, true)
	if len(notes) != 2 || notes[0].Rule != "queue" || notes[1].Rule != "startup" {
		t.Errorf("with readiness in history, not replayed %+v; want queue (signals) and startup (startup probes)", notes)
	}
}

// readyRecorded is recorded history that also holds readiness.
type readyRecorded struct {
	*recorded
	ready map[ContainerRef][]ReadySample
}

func (r *readyRecorded) Pods(ctx context.Context, namespace string, sel labels.Selector, from, to time.Time) ([]Pod, Coverage, error) {
	pods, cov, err := r.recorded.Pods(ctx, namespace, sel, from, to)
	cov.Readiness = true
	return pods, cov, err
}

func (r *readyRecorded) Readiness(_ context.Context, _ string, pods []string, from, to time.Time) (map[ContainerRef][]ReadySample, error) {
	out := map[ContainerRef][]ReadySample{}
	for ref, list := range r.ready {
		for _, s := range list {
			if slices.Contains(pods, ref.Pod) && s.Time.After(from) && !s.Time.After(to) {
				out[ref] = append(out[ref], s)
			}
		}
	}
	return out, nil
}

// TestReadinessInHistoryIsReplayed: with kube-state-metrics' readiness in
// history, stuck-readiness recreates a container not ready for its
// notReadyFor (10m), counted from the first pass that saw it not ready as
// the manager counts; without it, the rule is named as not replayed and
// recreates nothing.
func TestReadinessInHistoryIsReplayed(t *testing.T) {
	h := &recorded{}
	h.app("stuck", 2*time.Hour, flat)
	h.app("fine", 2*time.Hour, flat)
	ready := map[ContainerRef][]ReadySample{}
	for at := t0.Add(15 * time.Second); at.Before(t0.Add(2 * time.Hour)); at = at.Add(30 * time.Second) {
		notReady := at.After(t0.Add(30*time.Minute)) && at.Before(t0.Add(90*time.Minute))
		ready[ContainerRef{Pod: "stuck", Container: "app"}] = append(ready[ContainerRef{Pod: "stuck", Container: "app"}], ReadySample{Time: at, Ready: !notReady})
		ready[ContainerRef{Pod: "fine", Container: "app"}] = append(ready[ContainerRef{Pod: "fine", Container: "app"}], ReadySample{Time: at, Ready: true})
	}
	p := leakPolicy(v1alpha1.Limits{MaxMatchingPercent: new(int32(100))})
	p.Spec.Rules = []v1alpha1.Rule{{Name: "stuck", Builtin: "stuck-readiness"}}

	r, err := Run(context.Background(), p, &readyRecorded{recorded: h, ready: ready}, t0, t0.Add(2*time.Hour), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.NotReplayed) != 0 || !r.Coverage.Readiness {
		t.Errorf("not replayed %+v, readiness %t; want stuck-readiness replayed", r.NotReplayed, r.Coverage.Readiness)
	}
	if len(r.Results) != 1 || r.Results[0].Pod != "stuck" || len(r.Results[0].Recreations) == 0 {
		t.Fatalf("results %+v; want the stuck pod recreated", r.Results)
	}
	first := r.Results[0].Recreations[0]
	// Not ready from the sample after 30m15s; the first pass to see it is
	// at 30m30s, and 10 minutes later the rule matches.
	if at := first.At.Sub(t0); at < 40*time.Minute || at > 41*time.Minute || first.Rule != "stuck" || !strings.Contains(first.Reason, "not ready for 10m") {
		t.Errorf("first recreation at %s by %s (%q); want about 40m30s by stuck, not ready for 10m", at, first.Rule, first.Reason)
	}

	r, err = Run(context.Background(), p, h, t0, t0.Add(2*time.Hour), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Results) != 0 || len(r.NotReplayed) != 1 || r.NotReplayed[0].Rule != "stuck" {
		t.Errorf("without readiness: results %+v, not replayed %+v; want none, and stuck named", r.Results, r.NotReplayed)
	}
}
