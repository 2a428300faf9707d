package policy

import (
	"context"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/rejuv-dev/rejuv/policy/policytest"
	"github.com/rejuv-dev/rejuv/rules"
)

// heavyModule recreates a container whose working set is above
// input.parameters.bytes; no memory is no data.
const heavyModule = `package heavy
recreate contains {"container": c.name, "reason": sprintf("working set %d", [c.memory.workingSetBytes])} if {
	some c in input.containers
	c.memory.workingSetBytes > input.parameters.bytes
}
no_data contains {"container": c.name, "signal": "memory"} if {
	some c in input.containers
	not is_number(object.get(c, ["memory", "workingSetBytes"], null))
}
`

// heavyTwin is heavyModule's twin, counting its judgements.
type heavyTwin struct {
	bytes  int64
	judged int
}

func (h *heavyTwin) Judge(c *NativeContainer, _ time.Time) NativeVerdict {
	h.judged++
	if c.Memory == nil {
		return NativeVerdict{NoData: []string{"memory"}}
	}
	if c.Memory.WorkingSetBytes <= h.bytes {
		return NativeVerdict{}
	}
	return NativeVerdict{Recreate: true, Reason: "working set " + strconv.FormatInt(c.Memory.WorkingSetBytes, 10)}
}

// A program whose rules have twins gives what the same rules' modules
// give, beside a rule without one, on every way the engine evaluates a
// pod: at first sight, kept, with one entry changed, every window moved,
// and rule by rule; a pass whose results are kept does not judge again.
func TestTwinsGiveWhatTheirModulesGive(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	ctx := context.Background()
	near, _ := rules.Lookup("memory-near-limit")
	nearParams, err := near.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	twin := &heavyTwin{bytes: 300 << 20}
	params := map[string]any{"bytes": twin.bytes}
	rego := []Rule{
		{Name: "heavy", Module: heavyModule, Parameters: params},
		{Name: "near", Builtin: near.Name, Module: near.Source, Parameters: nearParams},
	}
	mixed := []Rule{
		{Name: "heavy", Module: heavyModule, Parameters: params, Native: twin},
		rego[1],
	}
	byModules, byTwin := program(t, Options{}, rego...), program(t, Options{}, mixed...)
	if !byTwin.hasNative || byTwin.combined == nil || byTwin.combined.both == nil {
		t.Fatal("premise: the program has a twin and a combined query for the other rule")
	}
	window := func(ws int64) *MemoryWindow {
		return &MemoryWindow{WorkingSetBytes: ws, Samples: 10, WindowSeconds: 600}
	}
	tg := Target{Pod: policytest.Pod(0, now), Containers: []ContainerCandidate{{Name: "app", Memory: window(100 << 20)}, {Name: "proxy", Memory: window(500 << 20)}}}
	steps := []struct {
		name   string
		change func()
		judged int // containers the twin judges
	}{
		{"first sight", func() {}, 2},
		{"kept", func() {}, 0},
		{"one entry changed", func() { tg.Containers[0].Memory = window(480 << 20) }, 1},
		{"every window moved", func() { tg.Containers[0].Memory, tg.Containers[1].Memory = window(481<<20), nil }, 2},
		{"rule by rule", func() { byTwin.split.Store(true); byModules.split.Store(true) }, 2},
	}
	matched := 0
	for _, step := range steps {
		step.change()
		before := twin.judged
		got, err := byTwin.Evaluate(ctx, tg, now)
		if err != nil {
			t.Fatal(err)
		}
		want, err := byModules.Evaluate(ctx, tg, now)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: the twin's program gives %+v, the modules' %+v", step.name, got, want)
		}
		if n := twin.judged - before; n != step.judged {
			t.Errorf("%s: the twin judged %d containers, want %d", step.name, n, step.judged)
		}
		for _, r := range got {
			matched += len(r.Matches) + len(r.NoData)
		}
	}
	if matched == 0 {
		t.Fatal("premise: no step matched or lacked data")
	}
}

// A program whose every rule has a twin runs no query.
func TestAProgramOfTwinsRunsNoQuery(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	twin := &heavyTwin{bytes: 1}
	p := program(t, Options{}, Rule{Name: "heavy", Module: heavyModule, Parameters: map[string]any{"bytes": 1}, Native: twin})
	if p.combined == nil || p.combined.recreate != nil || p.combined.both != nil {
		t.Fatalf("combined queries %+v; want none", p.combined)
	}
	tg := Target{Pod: policytest.Pod(0, now), Containers: []ContainerCandidate{{Name: "app", Memory: &MemoryWindow{WorkingSetBytes: 2}}}}
	got, err := p.Evaluate(context.Background(), tg, now)
	if err != nil {
		t.Fatal(err)
	}
	want := []RuleResult{{Rule: "heavy", Matches: []Match{{Container: "app", Reason: "working set 2"}}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

// A policy whose rules change from inline ones to built-ins with twins
// leaves nothing of what its former rules kept once its pods are judged
// again.
func TestTwinsLetGoOfWhatFormerRulesKept(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	ctx := context.Background()
	engine := NewEngine(Options{})
	ref := Ref{Namespace: "shop", Name: "web", Generation: 1}
	rule := Rule{Name: "heavy", Module: heavyModule, Parameters: map[string]any{"bytes": 1}}
	inline, err := engine.Program(ctx, ref, []Rule{rule})
	if err != nil {
		t.Fatal(err)
	}
	tg := Target{Pod: policytest.Pod(0, now), Containers: []ContainerCandidate{{Name: "app", Memory: &MemoryWindow{WorkingSetBytes: 2}}}}
	if _, err := inline.Evaluate(ctx, tg, now); err != nil {
		t.Fatal(err)
	}
	if n := engine.Pods().Len(); n != 1 {
		t.Fatalf("premise: the inline rule's program keeps the pod; %d pods kept", n)
	}
	ref.Generation = 2
	rule.Native = &heavyTwin{bytes: 1}
	twin, err := engine.Program(ctx, ref, []Rule{rule})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := twin.Evaluate(ctx, tg, now); err != nil {
		t.Fatal(err)
	}
	if n := engine.Pods().Len(); n != 0 {
		t.Errorf("%d pods kept after the twin's program judged the pod; want none", n)
	}
}
