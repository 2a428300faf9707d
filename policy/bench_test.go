package policy_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/rejuv-dev/rejuv/policy"
	"github.com/rejuv-dev/rejuv/policy/policytest"
	"github.com/rejuv-dev/rejuv/rules"
)

// benchProgram is one policy with three built-in rules.
func benchProgram(b *testing.B, now time.Time) *policy.Program {
	var prules []policy.Rule
	for name, params := range map[string]map[string]any{
		"stuck-readiness":   {"notReadyFor": "10m"},
		"memory-near-limit": {"fraction": 0.9},
		"max-age":           {"maxAge": "336h", "jitter": "1h"},
	} {
		r, _ := rules.Lookup(name)
		resolved, err := r.Resolve(params)
		if err != nil {
			b.Fatal(err)
		}
		prules = append(prules, policy.Rule{Name: name, Builtin: name, Module: r.Source, Parameters: resolved})
	}
	p, err := policy.NewEngine(policy.Options{Clock: func() time.Time { return now }}).Program(context.Background(), policy.PolicyRef{Namespace: "shop", Name: "web"}, prules)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func benchTargets(now time.Time) []policy.Target {
	targets := make([]policy.Target, 1000)
	for i := range targets {
		app := policy.Candidate{Name: "app", Memory: &policy.MemoryWindow{WorkingSetBytes: workingSet(i), Samples: 20, WindowSeconds: 600, R2: 0.5}}
		if i%49 == 0 {
			app.NotReadySince = now.Add(-time.Duration(i%20) * time.Minute)
		}
		targets[i] = policy.Target{Pod: policytest.Pod(i, now), Containers: []policy.Candidate{app, {Name: "proxy"}}}
	}
	return targets
}

// BenchmarkEvaluateWarm evaluates three built-in rules for pods whose
// conversion is cached; see test/bench/engine for the full comparison.
func BenchmarkEvaluateWarm(b *testing.B) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	p := benchProgram(b, now)
	targets := benchTargets(now)
	ctx := context.Background()
	i := 0
	for b.Loop() {
		if _, err := p.Evaluate(ctx, targets[i%len(targets)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkEvaluateCold evaluates the same rules for pods that all changed
// since their last evaluation, so each is converted afresh.
func BenchmarkEvaluateCold(b *testing.B) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	p := benchProgram(b, now)
	targets := benchTargets(now)
	ctx := context.Background()
	i := 0
	for b.Loop() {
		t := targets[i%len(targets)]
		t.Pod.ResourceVersion = strconv.Itoa(i)
		if _, err := p.Evaluate(ctx, t); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// workingSet is the app container's memory: every hundredth pod is near its
// 512Mi limit, the others well below.
func workingSet(i int) int64 {
	if i%100 == 50 {
		return 480 << 20
	}
	return int64(200+i%250) << 20
}
