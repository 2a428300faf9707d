package policy_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rejuv-dev/rejuv/policy"
	"github.com/rejuv-dev/rejuv/policy/policytest"
	"github.com/rejuv-dev/rejuv/rules"
)

var benchNow = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// benchRules are the three built-in rules of the benchmarks' policy.
var benchRules = map[string]map[string]any{
	"stuck-readiness":   {"notReadyFor": "10m"},
	"memory-near-limit": {"fraction": 0.9},
	"max-age":           {"maxAge": "336h", "jitter": "1h"},
	"stuck-startup":     {"startupFor": "10m"},
	"restart-storm":     {"minRestarts": 5, "window": "15m"},
	"memory-leak":       {"minGrowthPerHour": "50Mi", "minObservation": "30m"},
}

func benchProgram(b *testing.B, names ...string) *policy.Program {
	var prules []policy.Rule
	for _, name := range names {
		r, _ := rules.Lookup(name)
		resolved, err := r.Resolve(benchRules[name])
		if err != nil {
			b.Fatal(err)
		}
		prules = append(prules, policy.Rule{Name: name, Builtin: name, Module: r.Source, Parameters: resolved})
	}
	p, err := policy.NewEngine(policy.Options{}).Program(context.Background(), policy.Ref{Namespace: "shop", Name: "web"}, prules)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// benchTargets are realistic pods: one in 49 has its app container not
// ready, one in 100 is near its memory limit.
func benchTargets() []policy.Target {
	targets := make([]policy.Target, 1000)
	for i := range targets {
		app := policy.ContainerCandidate{Name: "app", Memory: &policy.MemoryWindow{WorkingSetBytes: workingSet(i), Samples: 20, WindowSeconds: 600, R2: 0.5}}
		if i%49 == 0 {
			app.NotReadySince = benchNow.Add(-time.Duration(i%20) * time.Minute)
		}
		targets[i] = policy.Target{Pod: policytest.Pod(i, benchNow), Containers: []policy.ContainerCandidate{app, {Name: "proxy"}}}
	}
	return targets
}

// workingSet is the app container's memory: every hundredth pod is near its
// 512Mi limit, the others well below.
func workingSet(i int) int64 {
	if i%100 == 50 {
		return 480 << 20
	}
	return int64(200+i%250) << 20
}

// BenchmarkEvaluateWarm evaluates built-in rules for pods whose conversion
// is cached: the three together, and each alone. See test/bench/engine for
// the comparison with the simple way.
func BenchmarkEvaluateWarm(b *testing.B) {
	for _, set := range [][]string{
		{"stuck-readiness", "memory-near-limit", "max-age"}, {"stuck-readiness", "stuck-startup", "restart-storm"},
		{"stuck-readiness", "memory-leak", "max-age"},
		{"stuck-readiness"}, {"memory-near-limit"}, {"max-age"}, {"stuck-startup"}, {"restart-storm"}, {"memory-leak"},
	} {
		b.Run(strings.Join(set, "+"), func(b *testing.B) {
			p := benchProgram(b, set...)
			targets := benchTargets()
			ctx := context.Background()
			i := 0
			for b.Loop() {
				if _, err := p.Evaluate(ctx, targets[i%len(targets)], benchNow); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkEvaluateCold evaluates rules for pods that all changed since
// their last evaluation: the app container restarted, so its entry and the
// no-data results are computed afresh.
func BenchmarkEvaluateCold(b *testing.B) {
	for _, set := range [][]string{
		{"stuck-readiness", "memory-near-limit", "max-age"}, {"stuck-readiness", "stuck-startup", "restart-storm"},
		{"stuck-readiness"}, {"memory-near-limit"}, {"max-age"}, {"stuck-startup"}, {"restart-storm"}, {"memory-leak"},
	} {
		b.Run(strings.Join(set, "+"), func(b *testing.B) {
			p := benchProgram(b, set...)
			targets := benchTargets()
			ctx := context.Background()
			i := 0
			for b.Loop() {
				t := targets[i%len(targets)]
				policytest.Restart(t.Pod, "app", benchNow.Add(-time.Duration(i%600)*time.Second))
				if _, err := p.Evaluate(ctx, t, benchNow); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
