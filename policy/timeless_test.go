package policy

import (
	"context"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/rejuv-dev/rejuv/rules"
)

func TestTimeless(t *testing.T) {
	cases := map[string]struct {
		body string
		want bool
	}{
		"containers only":       {`recreate contains c.name if { some c in input.containers; not c.ready }`, true},
		"a function":            {"recreate contains c.name if { some c in input.containers; big(c) }\nbig(c) if c.memory.workingSetBytes > 1", true},
		"formatting":            {`recreate contains {"container": c.name, "reason": rejuv.format_bytes(c.memory.workingSetBytes)} if { some c in input.containers }`, true},
		"input.now":             {`recreate contains c.name if { some c in input.containers; c.startedAt < input.now }`, false},
		"time.now_ns":           {`recreate contains c.name if { some c in input.containers; time.now_ns() > 0 }`, false},
		"time.now_ns in a call": {`recreate contains c.name if { some c in input.containers; abs(time.now_ns()) > 0 }`, false},
		"print":                 {`recreate contains c.name if { some c in input.containers; print(c.name) }`, false},
		"with":                  {`recreate contains c.name if { some c in input.containers; x with input.now as "y" }` + "\nx := 1", false},
		"input by variable":     {`recreate contains c.name if { some c in input.containers; some k; input[k] == 1 }`, false},
		"whole input":           {`recreate contains c.name if { some c in input.containers; object.get(input, "now", 1) == 1 }`, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m, err := ast.ParseModuleWithOpts("x.rego", "package x\nimport rego.v1\n"+tc.body+"\n", ast.ParserOptions{RegoVersion: ast.RegoV1})
			if err != nil {
				t.Fatal(err)
			}
			if got := timeless([]*ast.Module{m}); got != tc.want {
				t.Errorf("timeless: %v, want %v", got, tc.want)
			}
		})
	}
	for name, want := range map[string]bool{"memory-leak": true, "memory-near-limit": true, "stuck-readiness": false, "stuck-startup": false, "max-age": false, "restart-storm": false} {
		r, ok := rules.Lookup(name)
		if !ok {
			t.Fatalf("no built-in %s", name)
		}
		m, err := ast.ParseModuleWithOpts(r.Module, r.Source, ast.ParserOptions{RegoVersion: ast.RegoV1})
		if err != nil {
			t.Fatal(err)
		}
		if got := timeless([]*ast.Module{m}); got != want {
			t.Errorf("built-in %s: timeless %v, want %v", name, got, want)
		}
	}
}

// TestTimelessVerdictsFollowTheCandidates: a timeless program's verdict for
// an unchanged pod is kept and not evaluated again; a candidate whose
// memory changed is evaluated again.
func TestTimelessVerdictsFollowTheCandidates(t *testing.T) {
	p := program(t, Options{}, Rule{Name: "near", Module: `package near
import rego.v1
recreate contains {"container": c.name, "reason": rejuv.format_bytes(c.memory.workingSetBytes)} if {
	some c in input.containers
	c.memory.workingSetBytes > 100 * 1048576
}
`})
	if !p.timeless {
		t.Fatal("premise: the rule reads no time, yet the program is not timeless")
	}
	now := time.Now()
	tg := target(now, "app")
	tg.Containers[0].Memory = &MemoryWindow{WorkingSetBytes: 50 << 20, Samples: 3}
	evaluate := func(want int) {
		t.Helper()
		res, err := p.Evaluate(context.Background(), tg, time.Now())
		if err != nil || res[0].Err != nil {
			t.Fatal(err, res[0].Err)
		}
		if len(res[0].Matches) != want {
			t.Fatalf("%d matches, want %d", len(res[0].Matches), want)
		}
	}
	evaluate(0)
	_, results := p.opts.Pods.cached(tg.Pod)
	kept := results.of(p)
	if kept == nil || kept.matches == nil {
		t.Fatalf("no verdict kept: %+v", kept)
	}
	evaluate(0)
	if results.of(p) != kept {
		t.Error("the unchanged pod was evaluated again")
	}
	tg.Containers[0].Memory = &MemoryWindow{WorkingSetBytes: 150 << 20, Samples: 4}
	evaluate(1)
	if results.of(p) == kept {
		t.Error("the candidate's new memory did not replace the kept verdict")
	}
}
