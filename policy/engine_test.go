package policy

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rejuv-dev/rejuv/policy/policytest"
)

const notReadyRule = `package custom
import rego.v1

recreate contains {"container": c.name, "reason": "not ready"} if {
	some c in input.containers
	not c.ready
}
`

func TestProgramCompilesOncePerGeneration(t *testing.T) {
	ctx := context.Background()
	e := NewEngine(Options{})
	rules := []Rule{{Name: "custom", Module: notReadyRule}}
	ref := Ref{Namespace: "shop", Name: "web", Generation: 1}

	var wg sync.WaitGroup
	programs := make([]*Program, 16)
	for i := range programs {
		wg.Go(func() {
			p, err := e.Program(ctx, ref, rules)
			if err != nil {
				t.Error(err)
			}
			programs[i] = p
		})
	}
	wg.Wait()
	if got := e.Compiles(); got != 1 {
		t.Fatalf("16 concurrent callers of one generation: %d compiles, want 1", got)
	}
	for _, p := range programs[1:] {
		if p != programs[0] {
			t.Fatal("callers of one generation got different programs")
		}
	}
	if _, err := e.Program(ctx, ref, rules); err != nil || e.Compiles() != 1 {
		t.Fatalf("same generation again: err %v, compiles %d, want no new compile", err, e.Compiles())
	}
	ref.Generation = 2
	if _, err := e.Program(ctx, ref, rules); err != nil || e.Compiles() != 1 {
		t.Fatalf("next generation with the same rules: err %v, compiles %d, want no new compile", err, e.Compiles())
	}
	other := Ref{Namespace: "shop", Name: "other", Generation: 2}
	if _, err := e.Program(ctx, other, rules); err != nil || e.Compiles() != 1 {
		t.Fatalf("another policy with the same rules: err %v, compiles %d, want no new compile", err, e.Compiles())
	}
	changed := []Rule{{Name: "custom", Module: notReadyRule, Parameters: map[string]any{"x": 1}}}
	ref.Generation = 3
	if _, err := e.Program(ctx, ref, changed); err != nil || e.Compiles() != 2 {
		t.Fatalf("next generation with other parameters: err %v, compiles %d, want 2", err, e.Compiles())
	}
	e.Forget("shop", "web")
	e.Forget("shop", "other")
	if n := len(e.compiled); n != 0 {
		t.Errorf("%d compilations kept after every policy was forgotten", n)
	}
	if _, err := e.Program(ctx, ref, rules); err != nil || e.Compiles() != 3 {
		t.Fatalf("after Forget: err %v, compiles %d, want 3", err, e.Compiles())
	}
}

func TestPoliciesWithTheSameRulesShareTheirCompilationButNotTheirName(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	e := NewEngine(Options{})
	// name depends only on input.policy: an instant rule, evaluated once
	// per time and policy; both policies are evaluated at the same time.
	rules := []Rule{{Name: "custom", Module: `package custom
name := input.policy.name

recreate contains {"container": c.name, "reason": name} if {
	some c in input.containers
}
`}}
	a, err := e.Program(ctx, Ref{Namespace: "shop", Name: "a"}, rules)
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.Program(ctx, Ref{Namespace: "shop", Name: "b"}, rules)
	if err != nil {
		t.Fatal(err)
	}
	if e.Compiles() != 1 || a == b {
		t.Fatalf("%d compiles, programs the same: %v; want one compile and two programs", e.Compiles(), a == b)
	}
	target := Target{Pod: policytest.Pod(1, now), Containers: []ContainerCandidate{{Name: "app"}}}
	for _, p := range []*Program{a, b} {
		res, err := p.Evaluate(ctx, target, now)
		if err != nil || res[0].Err != nil || len(res[0].Matches) != 1 || res[0].Matches[0].Reason != p.Policy().Name {
			t.Errorf("policy %s: %v %+v, want its own name as the reason", p.Policy(), err, res)
		}
	}
}

func TestProgramKeepsCompileErrorOfGeneration(t *testing.T) {
	ctx := context.Background()
	e := NewEngine(Options{})
	ref := Ref{Namespace: "shop", Name: "web", Generation: 1}
	bad := []Rule{{Name: "broken", Module: "package x\nrecreate contains c if {\n  c := input.containers[_].name\n  undefined_fn(c)\n}\n"}}
	for range 2 {
		_, err := e.Program(ctx, ref, bad)
		var ce CompileErrors
		if !errors.As(err, &ce) || ce[0].Rule != "broken" || ce[0].Line != 4 {
			t.Fatalf("got %v, want a compile error of rule broken at line 4", err)
		}
	}
	if e.Compiles() != 1 {
		t.Errorf("a failed generation compiled %d times, want 1", e.Compiles())
	}
}

func TestEvaluateConcurrently(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	e := NewEngine(Options{})
	p, err := e.Program(ctx, Ref{Namespace: "shop", Name: "web"}, []Rule{{Name: "custom", Module: notReadyRule}})
	if err != nil {
		t.Fatal(err)
	}
	pods := make([]Target, 70)
	for i := range pods {
		pods[i] = Target{Pod: policytest.Pod(i, now), Containers: []ContainerCandidate{{Name: "app"}, {Name: "proxy"}}}
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for round := range 3 {
				for i, target := range pods {
					res, err := p.Evaluate(ctx, target, now)
					if err != nil || res[0].Err != nil {
						t.Errorf("pod %d round %d: %v %v", i, round, err, res[0].Err)
						return
					}
					wantMatch := i%7 == 0
					if got := len(res[0].Matches) == 1 && res[0].Matches[0].Container == "app"; got != wantMatch {
						t.Errorf("pod %d: matches %v, want app matched: %v", i, res[0].Matches, wantMatch)
					}
				}
			}
		})
	}
	wg.Wait()
	if n := e.Pods().Len(); n != len(pods) {
		t.Errorf("pod cache holds %d pods, want %d", n, len(pods))
	}
}

func TestEvaluateUnknownCandidate(t *testing.T) {
	ctx := context.Background()
	e := NewEngine(Options{})
	p, err := e.Program(ctx, Ref{Namespace: "shop", Name: "web"}, []Rule{{Name: "custom", Module: notReadyRule}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Evaluate(ctx, Target{Pod: policytest.Pod(1, time.Now()), Containers: []ContainerCandidate{{Name: "setup"}}}, time.Now())
	if err == nil || !strings.Contains(err.Error(), `container "setup" is not in the pod`) {
		t.Errorf("a completed init container as candidate: got %v, want an error naming it", err)
	}
}

// TestProgramOfARecreatedPolicy: a policy deleted and created again under
// its name, at the same generation, has its own rules compiled, even when
// the engine never heard of the deletion.
func TestProgramOfARecreatedPolicy(t *testing.T) {
	ctx := context.Background()
	e := NewEngine(Options{})
	old := Ref{Namespace: "shop", Name: "web", UID: "uid-1", Generation: 1}
	if _, err := e.Program(ctx, old, []Rule{{Name: "custom", Module: notReadyRule}}); err != nil {
		t.Fatal(err)
	}
	renewed := old
	renewed.UID = "uid-2"
	p, err := e.Program(ctx, renewed, []Rule{{Name: "other", Module: notReadyRule}})
	if err != nil {
		t.Fatal(err)
	}
	if e.Compiles() != 2 || len(p.rules) != 1 || p.rules[0].name != "other" {
		t.Errorf("compiles %d, program's rules %v: want the new policy's rule, compiled anew", e.Compiles(), p.rules)
	}
}
