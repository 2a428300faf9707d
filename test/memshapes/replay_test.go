package memshapes

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
	"github.com/rejuv-dev/rejuv/healer/workingset"
	"github.com/rejuv-dev/rejuv/policy"
	"github.com/rejuv-dev/rejuv/test/docgen"
)

// limitFraction is the memory-leak rule's default: a leak must be
// recreated before its working set reaches this fraction of its limit.
const limitFraction = 0.9

// Outcome is what happened to a shape in a replay: recreated by the rule,
// killed for running out of memory, or neither within its time.
type Outcome struct {
	// Recreated is set when the rule recreated the container, Killed when
	// the working set reached the limit first.
	Recreated, Killed bool
	// Age is the container's age then, Bytes its working set.
	Age    time.Duration
	Bytes  int64
	Reason string
}

// Met reports whether the outcome is what the shape must get.
func (o Outcome) Met(s Shape) bool {
	if !s.Leak {
		return !o.Recreated && !o.Killed
	}
	return o.Recreated && float64(o.Bytes) < limitFraction*float64(s.Limit)
}

// String says the outcome in a table's words.
func (o Outcome) String(s Shape) string {
	switch {
	case o.Recreated:
		return fmt.Sprintf("recreated after %s at %dMi (%.0f%% of the limit)", round(o.Age), o.Bytes/Mi, 100*float64(o.Bytes)/float64(s.Limit))
	case o.Killed:
		return fmt.Sprintf("reached its limit after %s (killed by the kernel)", round(o.Age))
	}
	return fmt.Sprintf("not recreated in %s", round(o.Age))
}

// round is a duration to the minute, as "1h5m".
func round(d time.Duration) string {
	return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
}

// seeds is how many replays each shape gets, each with its own noise and
// its samples at another moment of their interval.
const seeds = 5

// replay runs a shape through the manager's sampler (a sample every
// workingset.DefaultInterval, windows of workingset.DefaultWindow) and a
// policy with the built-in memory-leak rule at its defaults, evaluated
// after every sample, until the rule recreates the container, the working
// set reaches the limit, or the shape's time is over.
func replay(t testing.TB, s Shape, seed uint64) Outcome {
	t.Helper()
	ctx := context.Background()
	start := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	clock := clocktesting.NewFakeClock(start)
	spec := v1alpha1.RecreatePolicySpec{
		Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "shape"}},
		Rules:    []v1alpha1.Rule{{Name: "leak", Builtin: "memory-leak"}},
	}
	parsed, errs := policyspec.Parse(&spec)
	if len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	rp := &v1alpha1.RecreatePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shapes", Name: "leak", UID: "policy", Generation: 1}, Spec: spec}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shapes", Name: "app", UID: "pod", Labels: map[string]string{"app": "shape"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "shapes/app:1",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: *resource.NewQuantity(s.Limit, resource.BinarySI)}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
			Name: "app", Ready: true, ContainerID: "containerd://first",
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(start)}},
		}}},
	}
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(rp, pod).Build()
	src := &source{shape: s, seed: seed, start: start, clock: clock}
	sampler := &workingset.Sampler{Reader: reader, Source: src, Interval: workingset.DefaultInterval, Window: workingset.DefaultWindow, Clock: clock}
	engine := policy.NewEngine(policy.Options{Clock: clock.Now})
	program, err := engine.Program(ctx, policy.Ref{Namespace: rp.Namespace, Name: rp.Name, UID: rp.UID, Generation: 1}, parsed.Rules)
	if err != nil {
		t.Fatal(err)
	}
	// Samples come some moment into each interval, as a source's do.
	clock.Step(time.Second + time.Duration(seed*7%29)*time.Second)
	for age := clock.Since(start); age <= s.For; age = clock.Since(start) {
		bytes := s.Bytes(age, seed)
		if bytes >= s.Limit {
			return Outcome{Killed: true, Age: age, Bytes: bytes}
		}
		if err := sampler.SampleOnce(ctx); err != nil {
			t.Fatal(err)
		}
		w, why := sampler.Memory(pod, "app")
		if w == nil {
			t.Fatalf("%s: no window after %s: %s", s.Name, age, why)
		}
		results, err := program.EvaluateAt(ctx, policy.Target{Pod: pod, Containers: []policy.Candidate{{Name: "app", Memory: w}}}, clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range results {
			if r.Err != nil {
				t.Fatalf("%s: rule %s after %s: %v", s.Name, r.Rule, age, r.Err)
			}
			if len(r.Matches) > 0 {
				return Outcome{Recreated: true, Age: age, Bytes: bytes, Reason: r.Matches[0].Reason}
			}
		}
		clock.Step(workingset.DefaultInterval)
	}
	return Outcome{Age: s.For}
}

// source is the shape's working set of container app of pod app, at the
// clock's time.
type source struct {
	shape Shape
	seed  uint64
	start time.Time
	clock *clocktesting.FakeClock
}

func (s *source) Name() string { return "shape" }

func (s *source) Sample(context.Context, string) ([]workingset.Sample, error) {
	now := s.clock.Now()
	return []workingset.Sample{{Pod: "app", Container: "app", ContainerID: "first", Time: now, Bytes: s.shape.Bytes(now.Sub(s.start), s.seed)}}, nil
}

// TestCatalogue replays every shape with each seed: each leak is
// recreated before 90% of its limit, no healthy shape is ever recreated;
// and docs/rules.md holds the table of the outcomes (make docs writes it).
func TestCatalogue(t *testing.T) {
	shapes := Catalogue()
	outcomes := make([][]Outcome, len(shapes))
	t.Run("shapes", func(t *testing.T) {
		for i, s := range shapes {
			t.Run(s.Name, func(t *testing.T) {
				t.Parallel()
				for seed := range uint64(seeds) {
					o := replay(t, s, seed)
					outcomes[i] = append(outcomes[i], o)
					t.Logf("seed %d: %s %s", seed, o.String(s), o.Reason)
					if !o.Met(s) {
						want := "never recreated"
						if s.Leak {
							want = fmt.Sprintf("recreated before %.0f%% of its limit", 100*limitFraction)
						}
						t.Errorf("%s (%s), seed %d: %s; it must be %s (reason %q)", s.Name, s.What, seed, o.String(s), want, o.Reason)
					}
				}
			})
		}
	})
	if t.Failed() {
		return
	}
	docgen.Settle(t, "docs/rules.md", withTable(t, docgen.Template(t, "docs/rules.md"), table(shapes, outcomes)))
}
