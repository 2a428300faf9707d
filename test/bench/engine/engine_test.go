package engine

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/open-policy-agent/opa/v1/rego"
	corev1 "k8s.io/api/core/v1"

	"github.com/rejuv-dev/rejuv/policy"
	"github.com/rejuv-dev/rejuv/policy/policytest"
	"github.com/rejuv-dev/rejuv/rules"
)

const (
	fleet = 10_000
	// simpleSample is how many pods the simple way evaluates: it compiles
	// the rules for every pod, so the whole fleet would take minutes.
	simpleSample = 300
)

var now = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// policies are the benchmark's policies of built-in rules: one on probes
// and restarts, whose checks fail fast on a healthy container, one on
// memory and age, which does arithmetic on every container, and one on
// memory leaks over a fleet in trouble, where half the pods match and
// each match builds its reason.
var policies = []struct {
	name  string
	rules []BuiltinRule
	// trouble: half the pods' app containers leak towards their limit.
	trouble bool
}{
	{"probes", []BuiltinRule{
		{"stuck", "stuck-readiness", map[string]any{"notReadyFor": "10m"}},
		{"starting", "stuck-startup", map[string]any{"startupFor": "10m"}},
		{"storm", "restart-storm", map[string]any{"minRestarts": 5, "window": "15m"}},
	}, false},
	{"memory-and-age", []BuiltinRule{
		{"stuck", "stuck-readiness", map[string]any{"notReadyFor": "10m"}},
		{"near-limit", "memory-near-limit", map[string]any{"fraction": 0.9}},
		{"age", "max-age", map[string]any{"maxAge": "336h", "jitter": "1h"}},
	}, false},
	{"leaks-half-matching", Leaks, true},
}

// rounds is how many times each way is measured: the table shows the
// median, these machines being noisy.
const rounds = 3

// BenchmarkPolicyEngine prints, for each policy of built-in rules (see
// policies) over 10,000 realistic pods, the cost of Rejuv's engine warm (pods
// unchanged), cold (every pod changed since: its app container restarted),
// sampled (then every container's memory window moved by a sample)
// and at first sight (an empty cache: every pod converted), of a prepared
// query fed JSON, and of the simple way (a new query per pod with JSON
// input), all on one core, each the median of three rounds; then what the
// engine keeps a pod between passes (see benchmarkKept). Run with
// -benchtime 1x.
func BenchmarkPolicyEngine(b *testing.B) {
	for _, pol := range policies {
		b.Run(pol.name, func(b *testing.B) {
			for b.Loop() {
				benchmarkPolicy(b, pol.name, pol.rules, pol.trouble)
			}
		})
	}
	b.Run("kept", func(b *testing.B) {
		for b.Loop() {
			benchmarkKept(b)
		}
	})
}

func benchmarkPolicy(b *testing.B, name string, builtins []BuiltinRule, trouble bool) {
	ctx := context.Background()
	prules, err := PolicyRules(builtins)
	if err != nil {
		b.Fatal(err)
	}
	var (
		program                *policy.Program
		compiled               time.Duration
		firsts, warms, colds   []Measure
		sampleds               []Measure
		jsonPrepareds, simples []Measure
		evaluate               func(i int) int
		fleetTargets           []policy.Target
	)
	for range rounds {
		// Each round starts from the same fleet.
		fleetTargets = Targets(fleetPods(), trouble, now)
		engine := policy.NewEngine(policy.Options{Deadline: time.Second})
		compileStart := time.Now()
		program, err = engine.Program(ctx, policy.Ref{Namespace: "shop", Name: "web", Generation: 1}, prules)
		if err != nil {
			b.Fatal(err)
		}
		compiled = time.Since(compileStart)
		evaluate = func(i int) int {
			res, err := program.Evaluate(ctx, fleetTargets[i], now)
			if err != nil {
				b.Fatal(err)
			}
			return hits(b, res)
		}
		first := Run(fleet, evaluate)
		warm := Run(fleet, evaluate)
		if first.Hits != warm.Hits {
			b.Fatalf("first sight found %d matches, warm %d", first.Hits, warm.Hits)
		}
		// Every pod changes: its app container restarted a minute ago. The
		// app container's entry and the no-data results are computed
		// afresh, the parts of the pod that did not change are taken over.
		for _, t := range fleetTargets {
			policytest.Restart(t.Pod, "app", now.Add(-time.Minute))
		}
		cold := Run(fleet, evaluate)
		// A sampling interval later: every container's memory window
		// holds one sample more, the pods did not change.
		MoveWindows(fleetTargets)
		sampled := Run(fleet, evaluate)
		firsts, warms, colds, sampleds = append(firsts, first), append(warms, warm), append(colds, cold), append(sampleds, sampled)

		prepared, err := PreparedJSON(prules, now)
		if err != nil {
			b.Fatal(err)
		}
		jsonPrepareds = append(jsonPrepareds, Run(PreparedSample, func(i int) int {
			n, err := prepared(fleetTargets[i])
			if err != nil {
				b.Fatal(err)
			}
			return n
		}))
		simples = append(simples, Run(simpleSample, func(i int) int { return simpleWay(b, prules, fleetTargets[i]) }))
	}
	sameAsAfresh(b, program, prules, fleetTargets)
	first, warm, cold, jsonPrepared, simple := Median(firsts), Median(warms), Median(colds), Median(jsonPrepareds), Median(simples)
	sampled := Median(sampleds)

	check := func(way string, m Measure) {
		engineHits := 0
		for i := range m.Pods {
			engineHits += evaluate(i)
		}
		if engineHits != m.Hits {
			b.Fatalf("%s found %d matches in its sample, the engine %d", way, m.Hits, engineHits)
		}
	}
	check("the prepared query with JSON", jsonPrepareds[rounds-1])
	check("the simple way", simples[rounds-1])

	var names []string
	for _, r := range builtins {
		names = append(names, r.Builtin)
	}
	fmt.Printf("\npolicy %q: %s; %d pods of 2 candidate containers; one core; compile %s; median of %d rounds\n",
		name, strings.Join(names, ", "), fleet, compiled.Round(time.Millisecond), rounds)
	fmt.Printf("cold: every pod's app container restarted since the warm pass; sampled: then every memory window moved; matches warm %d, cold %d, sampled %d\n", warm.Hits, cold.Hits, sampled.Hits)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "way\tpods\ttime\tpods/s\tµs/pod\tallocs/pod\tKiB/pod\tvs simple\t")
	for _, row := range []struct {
		name string
		m    Measure
	}{
		{"Rejuv warm (pods cached)", warm},
		{"Rejuv cold (every pod changed)", cold},
		{"Rejuv sampled (every memory window moved)", sampled},
		{"Rejuv first sight (empty cache)", first},
		{"prepared query, JSON input", jsonPrepared},
		{"simple: new query per pod, JSON input", simple},
	} {
		fmt.Fprintf(w, "%s\t%d\t%s\t%.0f\t%.1f\t%d\t%.1f\t%.1fx\t\n", row.name, row.m.Pods, row.m.Took.Round(time.Millisecond), row.m.PerSecond(),
			float64(row.m.Took.Microseconds())/float64(row.m.Pods), row.m.Allocs, float64(row.m.Bytes)/1024, row.m.PerSecond()/simple.PerSecond())
	}
	_ = w.Flush()
}

// sameAsAfresh checks that the program's results for the changed pods, from
// documents partly taken over from before, are those of an engine that
// converts them from scratch.
func sameAsAfresh(b *testing.B, program *policy.Program, prules []policy.Rule, fleetTargets []policy.Target) {
	ctx := context.Background()
	fresh, err := policy.NewEngine(policy.Options{Deadline: time.Second}).
		Program(ctx, policy.Ref{Namespace: "shop", Name: "web", Generation: 1}, prules)
	if err != nil {
		b.Fatal(err)
	}
	for _, t := range fleetTargets {
		got, err := program.Evaluate(ctx, t, now)
		if err != nil {
			b.Fatal(err)
		}
		want, err := fresh.Evaluate(ctx, t, now)
		if err != nil {
			b.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			b.Fatalf("pod %s: results %+v, converted afresh %+v", t.Pod.Name, got, want)
		}
	}
}

func hits(b *testing.B, res []policy.RuleResult) int {
	n, err := Matches(res)
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// simpleWay compiles and evaluates each rule anew for the pod, with JSON
// input: what a first implementation does.
func simpleWay(b *testing.B, prules []policy.Rule, t policy.Target) int {
	n := 0
	input := JSONInput(t, now)
	for _, r := range prules {
		input["parameters"] = r.Parameters
		q, err := rego.New(policy.WithOwnBuiltins(
			rego.Module(r.Name+".rego", r.Module),
			rego.Query("data."+rulePackage(r)+".recreate"),
		)...).PrepareForEval(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		in, err := RoundTrip(input)
		if err != nil {
			b.Fatal(err)
		}
		rs, err := q.Eval(context.Background(), rego.EvalInput(in), rego.EvalTime(now))
		if err != nil {
			b.Fatal(err)
		}
		n += CountSet(rs)
	}
	return n
}

func rulePackage(r policy.Rule) string {
	x, _ := rules.Lookup(r.Builtin)
	return x.Package
}

// fleetPods are policytest's realistic pods.
func fleetPods() []*corev1.Pod {
	pods := make([]*corev1.Pod, fleet)
	for i := range pods {
		pods[i] = policytest.Pod(i, now)
	}
	return pods
}
