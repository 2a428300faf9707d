package policy

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/rejuv-dev/rejuv/policy/policytest"
	"github.com/rejuv-dev/rejuv/rules"
)

// Rules that judge each container on its own are told apart from rules
// whose results for one container depend on the others.
func TestPerContainer(t *testing.T) {
	for _, r := range rules.Builtins() {
		m := ast.MustParseModuleWithOpts(r.Source, ast.ParserOptions{RegoVersion: ast.RegoV1, ProcessAnnotation: true})
		if !perContainer([]*ast.Module{m}) {
			t.Errorf("built-in %s: not per container", r.Name)
		}
	}
	for name, tc := range map[string]struct {
		body string
		want bool
	}{
		"iterates once":     {`recreate contains {"container": c.name, "reason": "r"} if { some c in input.containers; not c.ready }`, true},
		"bare name":         {`recreate contains c.name if { some c in input.containers; not c.ready }`, true},
		"helper function":   {`recreate contains c.name if { some c in input.containers; bad(c) }` + "\nbad(c) if c.restartCount > input.parameters.n", true},
		"pod fields":        {`recreate contains c.name if { some c in input.containers; input.pod.metadata.labels.x == "y" }`, true},
		"no_data too":       {`recreate contains c.name if { some c in input.containers; not c.ready }` + "\n" + `no_data contains {"container": c.name, "signal": "ready"} if { some c in input.containers; not is_boolean(c.ready) }`, true},
		"counts containers": {`recreate contains c.name if { some c in input.containers; count(input.containers) > 1 }`, false},
		"pairs":             {`recreate contains a.name if { some a in input.containers; some b in input.containers; a.restartCount > b.restartCount }`, false},
		"index":             {`recreate contains c.name if { some i, c in input.containers; i == 0 }`, false},
		"bracket":           {`recreate contains input.containers[0].name if true`, false},
		"comprehension":     {`recreate contains c.name if { some c in input.containers; names := [x.name | some x in input.containers]; count(names) > 1 }`, false},
		"other container":   {`recreate contains "app" if { some c in input.containers; c.name == "proxy"; not c.ready }`, false},
		"reads recreate":    {`recreate contains c.name if { some c in input.containers; not c.ready }` + "\n" + `no_data contains {"container": c.name, "signal": "x"} if { some c in input.containers; count(recreate) > 1 }`, false},
		"helper rule":       {`recreate contains c.name if { some c in input.containers; many }` + "\nmany if count(input.containers) > 1", false},
		"input whole":       {`recreate contains c.name if { some c in input.containers; x := input; count(x.containers) > 1 }`, false},
		"with":              {`recreate contains c.name if { some c in input.containers; f(c) with input.pod as {} }` + "\nf(c) if c.ready", false},
		"every":             {`recreate contains c.name if { some c in input.containers; every x in input.containers { x.ready } }`, false},
		"no iteration":      {`recreate contains "app" if input.pod.metadata.labels.x == "y"`, false},
	} {
		m := ast.MustParseModuleWithOpts("package x\n"+tc.body+"\n", ast.ParserOptions{RegoVersion: ast.RegoV1})
		if got := perContainer([]*ast.Module{m}); got != tc.want {
			t.Errorf("%s: per container %v, want %v", name, got, tc.want)
		}
	}
}

// A per-container program evaluates only the candidates whose entries
// changed and keeps the others' results: its results are those of the
// whole pod evaluated at once.
func TestPerContainerResultsAreThoseOfTheWholePod(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	ctx := context.Background()
	var rs []Rule
	for _, name := range []string{"memory-leak", "memory-near-limit"} {
		r, _ := rules.Lookup(name)
		params, err := r.Resolve(map[string]any{"minObservation": "10m"})
		if name == "memory-near-limit" {
			params, err = r.Resolve(nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, Rule{Name: name, Builtin: name, Module: r.Source, Parameters: params})
	}
	p := program(t, Options{}, rs...)
	if !p.perContainer || !p.timeless {
		t.Fatalf("premise: the memory rules are per container (%v) and read no time (%v)", p.perContainer, p.timeless)
	}
	whole := program(t, Options{}, rs...)
	whole.perContainer = false
	leak := &MemoryWindow{WorkingSetBytes: 470 << 20, Samples: 40, WindowSeconds: 1200, SlopeBytesPerSecond: 30 << 20 / 3600, R2: 0.95,
		StartSlopeBytesPerSecond: 30 << 20 / 3600, EndSlopeBytesPerSecond: 30 << 20 / 3600, LatestSlopeBytesPerSecond: 30 << 20 / 3600}
	calm := &MemoryWindow{WorkingSetBytes: 40 << 20, Samples: 20, WindowSeconds: 600, R2: 0.1}
	tg := Target{Pod: policytest.Pod(0, now), Containers: []ContainerCandidate{{Name: "app", Memory: calm}, {Name: "proxy", Memory: calm}}}
	steps := []func(){
		func() {},
		func() { tg.Containers[0].Memory = leak },
		func() { policytest.Restart(tg.Pod, "app", now.Add(-time.Minute)) },
		func() { tg.Containers[1].Memory = nil },
		func() { tg.Containers[1].Memory = leak },
		func() { tg.Containers[0].Memory = calm; policytest.Restart(tg.Pod, "proxy", now) },
		func() { tg.Containers = tg.Containers[:1] },
	}
	evaluated := 0
	// proxyResults is what the proxy's entry gave, by step.
	var proxyResults []*entryVerdict
	for i, step := range steps {
		step()
		got, err := p.Evaluate(ctx, tg, now)
		if err != nil {
			t.Fatal(err)
		}
		if len(tg.Containers) > 1 {
			doc, results := p.opts.Pods.cached(tg.Pod)
			proxy, _ := doc.latest("proxy")
			proxyResults = append(proxyResults, results.of(p).verdictOf(proxy.id))
		}
		want, err := whole.Evaluate(ctx, tg, now)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("step %d: %+v, the whole pod gives %+v", i, got, want)
		}
		for _, r := range got {
			evaluated += len(r.Matches)
		}
	}
	if evaluated == 0 {
		t.Fatal("premise: no step matched")
	}
	// Steps 1 and 2 changed the app alone: the proxy kept its results;
	// step 3 changed the proxy.
	if proxyResults[0] == nil || proxyResults[1] != proxyResults[0] || proxyResults[2] != proxyResults[0] || proxyResults[3] == proxyResults[0] {
		t.Errorf("the proxy's results by step: %v; want the first three the same, the fourth new", proxyResults)
	}
}
