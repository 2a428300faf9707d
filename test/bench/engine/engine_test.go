package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/util"
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
	// preparedSample is how many pods the prepared query fed JSON evaluates.
	preparedSample = 2000
)

var now = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

type builtinRule struct {
	name, builtin string
	params        map[string]any
}

// policies are the benchmark's policies of built-in rules: one on probes
// and restarts, whose checks fail fast on a healthy container, one on
// memory and age, which does arithmetic on every container, and one on
// memory leaks over a fleet in trouble, where half the pods match and
// each match builds its reason.
var policies = []struct {
	name  string
	rules []builtinRule
	// trouble: half the pods' app containers leak towards their limit.
	trouble bool
}{
	{"probes", []builtinRule{
		{"stuck", "stuck-readiness", map[string]any{"notReadyFor": "10m"}},
		{"starting", "stuck-startup", map[string]any{"startupFor": "10m"}},
		{"storm", "restart-storm", map[string]any{"minRestarts": 5, "window": "15m"}},
	}, false},
	{"memory-and-age", []builtinRule{
		{"stuck", "stuck-readiness", map[string]any{"notReadyFor": "10m"}},
		{"near-limit", "memory-near-limit", map[string]any{"fraction": 0.9}},
		{"age", "max-age", map[string]any{"maxAge": "336h", "jitter": "1h"}},
	}, false},
	{"leaks-half-matching", []builtinRule{
		{"leak", "memory-leak", map[string]any{"minObservation": "10m", "minSamples": 10}},
		{"near-limit", "memory-near-limit", map[string]any{"fraction": 0.9}},
	}, true},
}

func policyRules(b *testing.B, builtins []builtinRule) []policy.Rule {
	var out []policy.Rule
	for _, x := range builtins {
		r, ok := rules.Lookup(x.builtin)
		if !ok {
			b.Fatalf("no builtin %s", x.builtin)
		}
		params, err := r.Resolve(x.params)
		if err != nil {
			b.Fatalf("%s: %v", x.builtin, err)
		}
		out = append(out, policy.Rule{Name: x.name, Builtin: r.Name, Module: r.Source, Parameters: params})
	}
	return out
}

// targets is the fleet, as sick as a real one: one pod in 49 has its app
// container not ready (for 0 to 19 minutes), one in 100 is near its memory
// limit, none is older than maxAge; every pod has a memory window. In
// trouble, every other pod's app container leaks steadily (r2 0.95, 30Mi
// an hour), and one in four of all is past 90% of its limit.
func targets(trouble bool) []policy.Target {
	out := make([]policy.Target, fleet)
	for i := range out {
		pod := policytest.Pod(i, now)
		app := policy.Candidate{Name: "app", Memory: &policy.MemoryWindow{
			WorkingSetBytes: workingSet(i), Samples: 20, WindowSeconds: 600, SlopeBytesPerSecond: float64(i % 50), R2: 0.5,
		}}
		if i%49 == 0 {
			app.NotReadySince = now.Add(-time.Duration(i%20) * time.Minute)
		}
		if trouble && i%2 == 0 {
			app.Memory = &policy.MemoryWindow{WorkingSetBytes: workingSet(i), Samples: 40, WindowSeconds: 1200, SlopeBytesPerSecond: 30 << 20 / 3600, R2: 0.95}
			if i%4 == 0 {
				app.Memory.WorkingSetBytes = 470 << 20
			}
		}
		proxy := policy.Candidate{Name: "proxy", Memory: &policy.MemoryWindow{WorkingSetBytes: 40 << 20, Samples: 20, WindowSeconds: 600, R2: 0.1}}
		out[i] = policy.Target{Pod: pod, Containers: []policy.Candidate{app, proxy}}
	}
	return out
}

// rounds is how many times each way is measured: the table shows the
// median, these machines being noisy.
const rounds = 3

// median is the measure of median time.
func median(ms []measure) measure {
	sorted := slices.SortedFunc(slices.Values(ms), func(a, b measure) int { return cmp.Compare(a.took, b.took) })
	return sorted[len(sorted)/2]
}

type measure struct {
	pods   int
	took   time.Duration
	allocs uint64
	bytes  uint64
	hits   int
}

func (m measure) perSecond() float64 { return float64(m.pods) / m.took.Seconds() }

// run measures f over n pods on one core.
func run(n int, f func(i int) int) measure {
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	hits := 0
	for i := range n {
		hits += f(i)
	}
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	return measure{pods: n, took: took, allocs: (after.Mallocs - before.Mallocs) / uint64(n), bytes: (after.TotalAlloc - before.TotalAlloc) / uint64(n), hits: hits}
}

// BenchmarkPolicyEngine prints, for each policy of built-in rules (see
// policies) over 10,000 realistic pods, the cost of Rejuv's engine warm (pods
// unchanged), cold (every pod changed since: its app container restarted),
// sampled (then every container's memory window moved by a sample)
// and at first sight (an empty cache: every pod converted), of a prepared
// query fed JSON, and of the simple way (a new query per pod with JSON
// input), all on one core, each the median of three rounds. Run with
// -benchtime 1x.
func BenchmarkPolicyEngine(b *testing.B) {
	for _, pol := range policies {
		b.Run(pol.name, func(b *testing.B) {
			for b.Loop() {
				benchmarkPolicy(b, pol.name, pol.rules, pol.trouble)
			}
		})
	}
}

func benchmarkPolicy(b *testing.B, name string, builtins []builtinRule, trouble bool) {
	ctx := context.Background()
	prules := policyRules(b, builtins)
	var (
		program                *policy.Program
		compiled               time.Duration
		firsts, warms, colds   []measure
		sampleds               []measure
		jsonPrepareds, simples []measure
		evaluate               func(i int) int
		fleetTargets           []policy.Target
	)
	for range rounds {
		// Each round starts from the same fleet.
		fleetTargets = targets(trouble)
		engine := policy.NewEngine(policy.Options{Clock: func() time.Time { return now }, Deadline: time.Second})
		compileStart := time.Now()
		var err error
		program, err = engine.Program(ctx, policy.Ref{Namespace: "shop", Name: "web", Generation: 1}, prules)
		if err != nil {
			b.Fatal(err)
		}
		compiled = time.Since(compileStart)
		evaluate = func(i int) int {
			res, err := program.Evaluate(ctx, fleetTargets[i])
			if err != nil {
				b.Fatal(err)
			}
			return hits(b, res)
		}
		first := run(fleet, evaluate)
		warm := run(fleet, evaluate)
		if first.hits != warm.hits {
			b.Fatalf("first sight found %d matches, warm %d", first.hits, warm.hits)
		}
		// Every pod changes: its app container restarted a minute ago. The
		// app container's entry and the no-data results are computed
		// afresh, the parts of the pod that did not change are taken over.
		for _, t := range fleetTargets {
			policytest.Restart(t.Pod, "app", now.Add(-time.Minute))
		}
		cold := run(fleet, evaluate)
		// A sampling interval later: every container's memory window
		// holds one sample more, the pods did not change.
		for _, t := range fleetTargets {
			for i := range t.Containers {
				if m := t.Containers[i].Memory; m != nil {
					moved := *m
					moved.Samples++
					moved.WorkingSetBytes += 1 << 20
					t.Containers[i].Memory = &moved
				}
			}
		}
		sampled := run(fleet, evaluate)
		firsts, warms, colds, sampleds = append(firsts, first), append(warms, warm), append(colds, cold), append(sampleds, sampled)

		prepared := preparedJSON(b, prules)
		jsonPrepareds = append(jsonPrepareds, run(preparedSample, func(i int) int { return prepared(fleetTargets[i]) }))
		simples = append(simples, run(simpleSample, func(i int) int { return simpleWay(b, prules, fleetTargets[i]) }))
	}
	sameAsAfresh(b, program, prules, fleetTargets)
	first, warm, cold, jsonPrepared, simple := median(firsts), median(warms), median(colds), median(jsonPrepareds), median(simples)
	sampled := median(sampleds)

	check := func(way string, m measure) {
		engineHits := 0
		for i := range m.pods {
			engineHits += evaluate(i)
		}
		if engineHits != m.hits {
			b.Fatalf("%s found %d matches in its sample, the engine %d", way, m.hits, engineHits)
		}
	}
	check("the prepared query with JSON", jsonPrepareds[rounds-1])
	check("the simple way", simples[rounds-1])

	var names []string
	for _, r := range builtins {
		names = append(names, r.builtin)
	}
	fmt.Printf("\npolicy %q: %s; %d pods of 2 candidate containers; one core; compile %s; median of %d rounds\n",
		name, strings.Join(names, ", "), fleet, compiled.Round(time.Millisecond), rounds)
	fmt.Printf("cold: every pod's app container restarted since the warm pass; sampled: then every memory window moved; matches warm %d, cold %d, sampled %d\n", warm.hits, cold.hits, sampled.hits)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "way\tpods\ttime\tpods/s\tµs/pod\tallocs/pod\tKiB/pod\tvs simple\t")
	for _, row := range []struct {
		name string
		m    measure
	}{
		{"Rejuv warm (pods cached)", warm},
		{"Rejuv cold (every pod changed)", cold},
		{"Rejuv sampled (every memory window moved)", sampled},
		{"Rejuv first sight (empty cache)", first},
		{"prepared query, JSON input", jsonPrepared},
		{"simple: new query per pod, JSON input", simple},
	} {
		fmt.Fprintf(w, "%s\t%d\t%s\t%.0f\t%.1f\t%d\t%.1f\t%.1fx\t\n", row.name, row.m.pods, row.m.took.Round(time.Millisecond), row.m.perSecond(),
			float64(row.m.took.Microseconds())/float64(row.m.pods), row.m.allocs, float64(row.m.bytes)/1024, row.m.perSecond()/simple.perSecond())
	}
	_ = w.Flush()
}

// sameAsAfresh checks that the program's results for the changed pods, from
// documents partly taken over from before, are those of an engine that
// converts them from scratch.
func sameAsAfresh(b *testing.B, program *policy.Program, prules []policy.Rule, fleetTargets []policy.Target) {
	ctx := context.Background()
	fresh, err := policy.NewEngine(policy.Options{Clock: func() time.Time { return now }, Deadline: time.Second}).
		Program(ctx, policy.Ref{Namespace: "shop", Name: "web", Generation: 1}, prules)
	if err != nil {
		b.Fatal(err)
	}
	for _, t := range fleetTargets {
		got, err := program.Evaluate(ctx, t)
		if err != nil {
			b.Fatal(err)
		}
		want, err := fresh.Evaluate(ctx, t)
		if err != nil {
			b.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			b.Fatalf("pod %s: results %+v, converted afresh %+v", t.Pod.Name, got, want)
		}
	}
}

func hits(b *testing.B, res []policy.RuleResult) int {
	n := 0
	for _, r := range res {
		if r.Err != nil {
			b.Fatal(r.Err)
		}
		n += len(r.Matches)
	}
	return n
}

// jsonInput is the input document the way a simple implementation builds
// it: the pod and the candidates as Go maps, through encoding/json.
func jsonInput(t policy.Target) map[string]any {
	pod := t.Pod.DeepCopy()
	pod.ManagedFields = nil
	statuses := map[string]map[string]any{}
	for _, list := range [][]corev1.ContainerStatus{t.Pod.Status.ContainerStatuses, t.Pod.Status.InitContainerStatuses} {
		for _, s := range list {
			statuses[s.Name] = containerStatus(s)
		}
	}
	specs := map[string]map[string]any{}
	for _, c := range t.Pod.Spec.InitContainers {
		specs[c.Name] = map[string]any{"kind": "sidecar", "image": c.Image, "resources": resources(c.Resources)}
	}
	for _, c := range t.Pod.Spec.Containers {
		specs[c.Name] = map[string]any{"kind": "container", "image": c.Image, "resources": resources(c.Resources)}
	}
	var containers []any
	for _, c := range t.Containers {
		entry := map[string]any{"name": c.Name, "notReadySince": timeOrNil(c.NotReadySince),
			"recreations": map[string]any{"total": c.Recreations, "last": timeOrNil(c.LastRecreation)}, "memory": nil}
		maps.Copy(entry, specs[c.Name])
		maps.Copy(entry, statuses[c.Name])
		if m := c.Memory; m != nil {
			entry["memory"] = map[string]any{"workingSetBytes": m.WorkingSetBytes, "samples": m.Samples, "windowSeconds": m.WindowSeconds,
				"slopeBytesPerSecond": m.SlopeBytesPerSecond, "r2": m.R2}
		}
		containers = append(containers, entry)
	}
	return map[string]any{"pod": pod, "containers": containers, "signals": map[string]any{},
		"now": now.Format(time.RFC3339Nano), "policy": map[string]any{"name": "web", "namespace": "shop"}}
}

// roundTrip is the JSON round trip a simple implementation does.
func roundTrip(b *testing.B, v any) any {
	raw, err := json.Marshal(v)
	if err != nil {
		b.Fatal(err)
	}
	var out any
	if err := util.UnmarshalJSON(raw, &out); err != nil {
		b.Fatal(err)
	}
	return out
}

// preparedJSON prepares each rule once and feeds it JSON-decoded input.
func preparedJSON(b *testing.B, prules []policy.Rule) func(policy.Target) int {
	type prepared struct {
		q      rego.PreparedEvalQuery
		params any
	}
	var qs []prepared
	for _, r := range prules {
		module, err := ast.ParseModuleWithOpts(r.Name+".rego", r.Module, ast.ParserOptions{RegoVersion: ast.RegoV1})
		if err != nil {
			b.Fatal(err)
		}
		q, err := rego.New(rego.ParsedModule(module), rego.Query(module.Package.Path.String()+".recreate")).PrepareForEval(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		qs = append(qs, prepared{q: q, params: roundTrip(b, r.Parameters)})
	}
	return func(t policy.Target) int {
		n := 0
		input := jsonInput(t)
		for _, p := range qs {
			input["parameters"] = p.params
			rs, err := p.q.Eval(context.Background(), rego.EvalInput(roundTrip(b, input)), rego.EvalTime(now))
			if err != nil {
				b.Fatal(err)
			}
			n += countSet(rs)
		}
		return n
	}
}

// simpleWay compiles and evaluates each rule anew for the pod, with JSON
// input: what a first implementation does.
func simpleWay(b *testing.B, prules []policy.Rule, t policy.Target) int {
	n := 0
	input := jsonInput(t)
	for _, r := range prules {
		input["parameters"] = r.Parameters
		q, err := rego.New(
			rego.Module(r.Name+".rego", r.Module),
			rego.Query("data."+rulePackage(r)+".recreate"),
		).PrepareForEval(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		rs, err := q.Eval(context.Background(), rego.EvalInput(roundTrip(b, input)), rego.EvalTime(now))
		if err != nil {
			b.Fatal(err)
		}
		n += countSet(rs)
	}
	return n
}

func rulePackage(r policy.Rule) string {
	x, _ := rules.Lookup(r.Builtin)
	return x.Package
}

func countSet(rs rego.ResultSet) int {
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return 0
	}
	set, _ := rs[0].Expressions[0].Value.([]any)
	return len(set)
}

// workingSet is the app container's memory: every hundredth pod is near its
// 512Mi limit, the others well below.
func workingSet(i int) int64 {
	if i%100 == 50 {
		return 480 << 20
	}
	return int64(200+i%250) << 20
}
