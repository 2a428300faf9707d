package memshapes

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
	"github.com/rejuv-dev/rejuv/healer/workingset"
	"github.com/rejuv-dev/rejuv/policy"
	"github.com/rejuv-dev/rejuv/test/docgen"
)

// seeds is how many replays each shape gets, each with its own noise and
// its samples at another moment of their interval.
const seeds = 5

// replay runs a shape through the manager's sampler (a sample every
// workingset.DefaultInterval, windows of workingset.DefaultWindow) and a
// policy with the built-in memory-leak rule at its defaults, evaluated
// after every sample, until the rule recreates the container or the
// shape's time is over. An instance whose working set reaches the limit is
// killed, and the kubelet starts the next at once, with the kernel's
// verdict as its last termination.
func replay(t testing.TB, s Shape, seed uint64) Outcome {
	t.Helper()
	return replayWith(t, s, seed, nil, nil)
}

// replayWith is replay with the rule's parameters (nil for its defaults),
// and each sample lagging the clock by lag(seed, sample time) (nil for
// none): a source that reports what it read some seconds ago.
func replayWith(t testing.TB, s Shape, seed uint64, params map[string]apiextensionsv1.JSON, lag func(seed uint64, at time.Time) time.Duration) Outcome {
	t.Helper()
	ctx := context.Background()
	start := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	clock := clocktesting.NewFakeClock(start)
	spec := v1alpha1.RecreatePolicySpec{
		Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "shape"}},
		Rules:    []v1alpha1.Rule{{Name: "leak", Builtin: "memory-leak", Parameters: params}},
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
	src := &source{shape: s, seed: seed, started: start, id: "first", clock: clock, lag: lag}
	sampler := &workingset.Sampler{Reader: reader, Source: src, Interval: workingset.DefaultInterval, Window: workingset.DefaultWindow, Clock: clock}
	// The replay judges the rule's verdicts, not its speed: a deadline
	// that a loaded machine cannot miss (the default, 250 ms, was missed
	// at idle priority beside the whole suite).
	engine := policy.NewEngine(policy.Options{Deadline: time.Minute})
	program, err := engine.Program(ctx, policy.Ref{Namespace: rp.Namespace, Name: rp.Name, UID: rp.UID, Generation: 1}, parsed.Rules)
	if err != nil {
		t.Fatal(err)
	}
	clock.Step(FirstSample(seed))
	var out Outcome
	for clock.Since(start) <= s.For {
		age := clock.Since(src.started)
		bytes := s.Bytes(Moment{Age: age, Instance: len(out.Kills), Seed: seed})
		if bytes >= s.Limit {
			out.Kills = append(out.Kills, age)
			src.kill(t, reader, pod)
			continue
		}
		if err := sampler.SampleOnce(ctx); err != nil {
			t.Fatal(err)
		}
		w, why := sampler.Memory(pod, "app")
		if w == nil {
			t.Fatalf("%s: no window after %s: %s", s.Name, age, why)
		}
		results, err := program.Evaluate(ctx, policy.Target{Pod: pod, Containers: []policy.ContainerCandidate{{Name: "app", Memory: w}}}, clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range results {
			if r.Err != nil {
				t.Fatalf("%s: rule %s after %s: %v", s.Name, r.Rule, age, r.Err)
			}
			if len(r.Matches) > 0 {
				out.Recreated, out.Age, out.Bytes, out.Reason = true, age, bytes, r.Matches[0].Reason
				return out
			}
		}
		clock.Step(workingset.DefaultInterval)
	}
	return out
}

// source is the shape's working set of container app of pod app, at the
// clock's time.
type source struct {
	shape Shape
	seed  uint64
	// started is when the running instance started, id its ID; kills
	// counts the instances before it.
	started time.Time
	id      string
	kills   int
	clock   *clocktesting.FakeClock
	// lag, when set, is how old each sample is.
	lag func(seed uint64, at time.Time) time.Duration
}

func (s *source) Name() string { return "shape" }

func (s *source) Sample(context.Context, string) ([]workingset.Sample, error) {
	now := s.clock.Now()
	read := now
	if s.lag != nil {
		read = now.Add(-s.lag(s.seed, now))
	}
	at := Moment{Age: max(read.Sub(s.started), 0), Instance: s.kills, Seed: s.seed}
	return []workingset.Sample{{Pod: "app", Container: "app", ContainerID: s.id, Time: now, Bytes: s.shape.Bytes(at)}}, nil
}

// kill ends the running instance for running out of memory and starts the
// next, as the kernel and the kubelet do: a new ID, the restart counted,
// the kernel's verdict as the last termination.
func (s *source) kill(t testing.TB, c client.Client, pod *corev1.Pod) {
	t.Helper()
	now := s.clock.Now()
	s.kills++
	s.id = fmt.Sprintf("instance-%d", s.kills)
	cs := &pod.Status.ContainerStatuses[0]
	cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		Reason: "OOMKilled", ExitCode: 137, StartedAt: metav1.NewTime(s.started), FinishedAt: metav1.NewTime(now),
		ContainerID: cs.ContainerID,
	}}
	s.started = now
	cs.ContainerID, cs.RestartCount = "containerd://"+s.id, cs.RestartCount+1
	cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(now)}}
	if err := c.Status().Update(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
}

// TestCatalogue replays every shape with each seed: each leak is
// recreated before 90% of its limit, no healthy shape is ever recreated,
// a backtest of the shape's recording finds the same (the same kills, the
// same first recreation with the same reason); and docs/rules.md holds
// the table of the outcomes (make docs writes it).
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
					if bt := backtested(t, s, seed); bt.String(s) != o.String(s) || (o.Recreated && bt.Reason != "leak: app: "+o.Reason) {
						t.Errorf("%s, seed %d: the backtest of its recording found %s (reason %q); the replay %s (reason %q)", s.Name, seed, bt.String(s), bt.Reason, o.String(s), o.Reason)
					}
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
