package twins

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rejuv-dev/rejuv/policy"
	"github.com/rejuv-dev/rejuv/rules"
)

var now = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

// TestEveryBuiltinWithATwinIsKnown: a twin is named after a built-in rule
// (a renamed rule would leave its twin unused).
func TestEveryBuiltinWithATwinIsKnown(t *testing.T) {
	for name := range twins {
		r, ok := rules.Lookup(name)
		if !ok {
			t.Errorf("twin %s: no built-in rule of that name", name)
			continue
		}
		params, err := r.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		if Of(r, params) == nil {
			t.Errorf("twin %s: Of gives none", name)
		}
	}
	if r, _ := rules.Lookup("max-age"); Of(r, map[string]any{}) != nil {
		t.Error("max-age has a twin; want none")
	}
}

// TestTwinsJudgeAsTheirModules evaluates each rule with a twin over
// thousands of random containers (memory windows, limits, the previous
// instance's end), at its defaults and at random parameters, with the
// module (OPA's evaluator) and with the twin, and wants the same matches,
// reasons and no-data results for every pod. The premise, that every way
// the module decides was taken, is checked by the reasons' kinds seen.
func TestTwinsJudgeAsTheirModules(t *testing.T) {
	ctx := context.Background()
	for name := range twins {
		t.Run(name, func(t *testing.T) {
			builtin, _ := rules.Lookup(name)
			rng := rand.New(rand.NewPCG(7, uint64(len(name))))
			kinds := map[string]int{}
			for round := range 12 {
				given := map[string]any{}
				if round > 0 {
					given = randomParameters(rng, name)
				}
				params, err := builtin.Resolve(given)
				if err != nil {
					t.Fatalf("parameters %v: %v", given, err)
				}
				rego := []policy.Rule{{Name: "r", Builtin: name, Module: builtin.Source, Parameters: params}}
				twin := []policy.Rule{{Name: "r", Builtin: name, Module: builtin.Source, Parameters: params, Native: Of(builtin, params)}}
				ref := policy.Ref{Namespace: "ns", Name: fmt.Sprintf("p%d", round), Generation: 1}
				byRego, err := policy.NewEngine(policy.Options{Deadline: 10 * time.Second}).Program(ctx, ref, rego)
				if err != nil {
					t.Fatal(err)
				}
				byTwin, err := policy.NewEngine(policy.Options{Deadline: 10 * time.Second}).Program(ctx, ref, twin)
				if err != nil {
					t.Fatal(err)
				}
				for i := range 400 {
					target := randomTarget(rng, i, params)
					want, err := byRego.Evaluate(ctx, target, now)
					if err != nil {
						t.Fatal(err)
					}
					got, err := byTwin.Evaluate(ctx, target, now)
					if err != nil {
						t.Fatal(err)
					}
					if want[0].Err != nil {
						t.Fatalf("the module failed: %v", want[0].Err)
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("parameters %v, pod %d (%s):\n twin   %+v\n module %+v", given, i, describe(target), got, want)
					}
					for _, m := range want[0].Matches {
						kinds[reasonKind(m.Reason)]++
					}
					for _, n := range want[0].NoData {
						kinds["no data: "+n.Signal]++
					}
				}
			}
			want := map[string][]string{
				"memory-leak":       {"already", "horizon", "growthHorizon", "no limit", "killed", "no data: memory", "no data: memory.history"},
				"memory-near-limit": {"near", "no data: memory", "no data: resources.limits.memory"},
			}[name]
			for _, k := range want {
				if kinds[k] < 5 {
					t.Errorf("%s: %d pods judged so; the random pods must take every way the module decides", k, kinds[k])
				}
			}
			t.Logf("judged alike: %v", kinds)
		})
	}
}

// reasonKind tells which of the module's reasons a reason is.
func reasonKind(reason string) string {
	switch {
	case strings.HasPrefix(reason, "the previous instance was killed"):
		return "killed"
	case strings.Contains(reason, " is already "):
		return "already"
	case strings.Contains(reason, "(growthHorizon "):
		return "growthHorizon"
	case strings.Contains(reason, "(horizon "):
		return "horizon"
	case strings.Contains(reason, "% of the ") && strings.Contains(reason, "(threshold"):
		return "near"
	}
	return "no limit"
}

func randomParameters(rng *rand.Rand, rule string) map[string]any {
	if rule == "memory-near-limit" {
		return map[string]any{"fraction": []float64{0.5, 0.75, 0.9, 0.95, 0.999999, 1, float64(rng.IntN(1000)+1) / 1000}[rng.IntN(7)]}
	}
	return map[string]any{
		"minGrowthPerHour":    fmt.Sprintf("%dMi", rng.IntN(60)+1),
		"minObservation":      fmt.Sprintf("%dm", rng.IntN(120)+1),
		"minSamples":          rng.IntN(30) + 1,
		"minFit":              []float64{0.5, 0.8, 0.9, float64(rng.IntN(100)+1) / 100}[rng.IntN(4)],
		"minSustained":        []float64{0.5, 0.8, 1, float64(rng.IntN(100)+1) / 100}[rng.IntN(4)],
		"oomLifetimeFraction": []float64{0.5, 0.75, 1}[rng.IntN(3)],
		"limitFraction":       []float64{0.8, 0.9, 0.95, 1}[rng.IntN(4)],
		"growthHorizon":       fmt.Sprintf("%dh", rng.IntN(24)+1),
		"horizon":             fmt.Sprintf("%dm", rng.IntN(180)+1),
	}
}

// randomTarget is a pod of up to three containers, each with or without a
// memory limit, a memory window, and a previous instance killed for
// running out of memory (or ended otherwise), around the thresholds of
// params.
func randomTarget(rng *rand.Rand, i int, params map[string]any) policy.Target {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("pod-%d", i), UID: "u", ResourceVersion: fmt.Sprint(i)}}
	var candidates []policy.ContainerCandidate
	for j := range rng.IntN(3) + 1 {
		name := fmt.Sprintf("c%d", j)
		c := corev1.Container{Name: name, Image: "app"}
		limit := int64(0)
		if rng.IntN(5) > 0 {
			limit = []int64{1_000_000, 512 << 20, 1 << 30, int64(rng.IntN(4<<30) + 1)}[rng.IntN(4)]
			c.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: *resource.NewQuantity(limit, resource.BinarySI)}
		}
		pod.Spec.Containers = append(pod.Spec.Containers, c)
		st := corev1.ContainerStatus{Name: name, Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(now.Add(-time.Hour))}}}
		if rng.IntN(3) == 0 {
			lived := time.Duration(rng.IntN(4*3600)+1) * time.Second
			reason := []string{"OOMKilled", "OOMKilled", "Error", "Completed"}[rng.IntN(4)]
			st.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{Reason: reason, ExitCode: 137,
				StartedAt: metav1.NewTime(now.Add(-2*time.Hour - lived)), FinishedAt: metav1.NewTime(now.Add(-2 * time.Hour))}
			if rng.IntN(10) == 0 {
				st.LastTerminationState.Terminated.StartedAt = metav1.Time{}
			}
		}
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, st)
		candidates = append(candidates, policy.ContainerCandidate{Name: name, Memory: randomWindow(rng, limit, params)})
	}
	return policy.Target{Pod: pod, Containers: candidates}
}

func randomWindow(rng *rand.Rand, limit int64, params map[string]any) *policy.MemoryWindow {
	if rng.IntN(8) == 0 {
		return nil
	}
	scale := float64(limit)
	if scale == 0 {
		scale = 1 << 30
	}
	m := &policy.MemoryWindow{
		WorkingSetBytes: int64(rng.Float64() * 1.2 * scale),
		Samples:         rng.IntN(40),
		WindowSeconds:   rng.Float64() * 7200,
		R2:              rng.Float64(),
	}
	slope := (rng.Float64() - 0.2) * scale / 3600 // up to the whole limit an hour
	m.SlopeBytesPerSecond = slope
	m.StartSlopeBytesPerSecond = slope * (0.5 + rng.Float64())
	m.EndSlopeBytesPerSecond = slope * (0.5 + rng.Float64())
	m.LatestSlopeBytesPerSecond = slope * (0.5 + rng.Float64())
	// Now and then exactly at a threshold.
	if v, ok := params["minObservation"].(float64); ok && rng.IntN(10) == 0 {
		m.WindowSeconds = v
	}
	if v, ok := params["minSamples"].(int64); ok && rng.IntN(10) == 0 {
		m.Samples = int(v)
	}
	if v, ok := params["minFit"].(float64); ok && rng.IntN(10) == 0 {
		m.R2 = v
	}
	if rng.IntN(4) > 0 {
		// Mostly a leak that fits.
		m.R2 = 0.8 + 0.2*rng.Float64()
		m.Samples += 10
		m.WindowSeconds += 1800
		m.SlopeBytesPerSecond = max(m.SlopeBytesPerSecond, 1)
		m.StartSlopeBytesPerSecond, m.EndSlopeBytesPerSecond, m.LatestSlopeBytesPerSecond = m.SlopeBytesPerSecond, m.SlopeBytesPerSecond*1.1, m.SlopeBytesPerSecond
	}
	if v, ok := params["fraction"].(float64); ok && limit == 1_000_000 && rng.IntN(4) == 0 {
		// Exactly at the fraction of the limit, in whole bytes.
		m.WorkingSetBytes = int64(v * 1_000_000)
	}
	return m
}

func describe(t policy.Target) string {
	var parts []string
	for i, c := range t.Containers {
		part := fmt.Sprintf("%s limit %v", c.Name, t.Pod.Spec.Containers[i].Resources.Limits.Memory())
		if c.Memory != nil {
			part += fmt.Sprintf(" window %+v", *c.Memory)
		}
		if term := t.Pod.Status.ContainerStatuses[i].LastTerminationState.Terminated; term != nil {
			part += fmt.Sprintf(" last %s %s..%s", term.Reason, term.StartedAt, term.FinishedAt)
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, "; ")
}
