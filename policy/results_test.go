package policy

import (
	"context"
	"testing"
	"time"

	"github.com/rejuv-dev/rejuv/policy/policytest"
)

// A program that goes over to evaluating its rules one by one (its
// combined query ran past the deadline on some pod) keeps no results of
// its pods from then on: what it kept before would hold, for as long as
// the pod lives, the entries and the pod value it was kept with.
func TestAProgramEvaluatedRuleByRuleKeepsNoResults(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	ctx := context.Background()
	e := NewEngine(Options{})
	p, err := e.Program(ctx, Ref{Namespace: "shop", Name: "web"}, []Rule{{Name: "custom", Module: notReadyRule}})
	if err != nil {
		t.Fatal(err)
	}
	tg := Target{Pod: policytest.Pod(3, now), Containers: []ContainerCandidate{{Name: "app"}}}
	if _, err := p.Evaluate(ctx, tg, now); err != nil {
		t.Fatal(err)
	}
	_, results := e.Pods().cached(tg.Pod)
	if results.of(p) == nil {
		t.Fatal("premise: the program kept no results of the pod evaluated whole")
	}
	p.split.Store(true)
	res, err := p.Evaluate(ctx, tg, now)
	if err != nil || res[0].Err != nil {
		t.Fatal(err, res[0].Err)
	}
	if kept := results.of(p); kept != nil {
		t.Errorf("evaluated rule by rule, the program still keeps results of the pod: %+v", kept)
	}
}

// A pod keeps nothing for a policy's older generation, nor for a policy
// deleted, once evaluated again: neither results nor entries.
func TestAPodKeepsNothingForARetiredProgram(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	ctx := context.Background()
	e := NewEngine(Options{})
	pod := policytest.Pod(3, now)
	gen := func(name string, generation int64) *Program {
		p, err := e.Program(ctx, Ref{Namespace: "shop", Name: name, Generation: generation}, []Rule{{Name: "custom", Module: notReadyRule}})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	evaluate := func(p *Program, recreations int) {
		tg := Target{Pod: pod, Containers: []ContainerCandidate{{Name: "app", Recreations: recreations}}}
		if _, err := p.Evaluate(ctx, tg, now); err != nil {
			t.Fatal(err)
		}
	}
	kept := func() (programs []*Program, entries int) {
		doc, results := e.Pods().cached(pod)
		doc.mu.Lock()
		for _, c := range doc.candidates {
			programs = append(programs, c.program)
		}
		doc.mu.Unlock()
		entries = len(programs)
		programs = programs[:0]
		for _, v := range results.byProgram {
			programs = append(programs, v.program)
		}
		return programs, entries
	}
	first, other := gen("web", 1), gen("api", 1)
	evaluate(first, 1)
	evaluate(other, 2)
	if programs, entries := kept(); len(programs) != 2 || entries != 2 {
		t.Fatalf("premise: the pod keeps results of %d programs and %d entries, want 2 and 2", len(programs), entries)
	}
	second := gen("web", 2)
	evaluate(second, 3)
	e.Forget("shop", "api")
	evaluate(second, 3)
	if programs, entries := kept(); len(programs) != 1 || programs[0] != second || entries != 1 {
		t.Errorf("after a new generation of one policy and the other deleted, the pod keeps results of %d programs (want the new generation's alone) and %d entries (want 1)", len(programs), entries)
	}
}
