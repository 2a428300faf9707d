package policy

import (
	"context"
	"slices"
	"testing"
	"time"
)

func TestInstantRules(t *testing.T) {
	module := `package a
now_s := time.parse_rfc3339_ns(input.now) / 1000000000
later := now_s + 60
named := concat("/", [input.policy.namespace, input.policy.name])
clock := time.now_ns()
table := {"a": 1}
names := {c.name | some c in input.containers}
first := names[_]
printed := 1 if print("x")
half(x) := x / 2
halved := half(4)
shadowed := v if v := input.now with input.now as "2026-01-01T00:00:00Z"

recreate contains "app" if {
	now_s >= 0
	later > now_s
	named != ""
	clock > 0
	table.a == 1
	count(names) > 0
	first != ""
	printed == 1
	halved == 2
	shadowed != ""
}`
	cr, err := Compile(context.Background(), []Rule{{Name: "r", Module: module}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := combine(context.Background(), cr)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ref := range c.instants.refs {
		got = append(got, ref.String())
	}
	slices.Sort(got)
	want := []string{
		"data.rejuv.parameters.r0",
		"data.rejuv.policy.r0.clock",
		"data.rejuv.policy.r0.later",
		"data.rejuv.policy.r0.named",
		"data.rejuv.policy.r0.now_s",
		"data.rejuv.policy.r0.table",
	}
	if !slices.Equal(got, want) {
		t.Errorf("instant rules %v, want %v", got, want)
	}
}

// Values computed once per time must follow the time.
func TestInstantRulesFollowTheTime(t *testing.T) {
	start := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	p := program(t, Options{}, Rule{Name: "due", Module: `package a
cutoff := time.parse_rfc3339_ns("2026-11-21T12:30:00Z")
now_ns := time.parse_rfc3339_ns(input.now)
recreate contains "app" if now_ns >= cutoff
`})
	if p.combined == nil || p.combined.instants == nil {
		t.Fatal("no instant rules found")
	}
	for _, step := range []struct {
		at   time.Duration
		want bool
	}{{0, false}, {time.Hour, true}, {time.Hour, true}, {0, false}, {30 * time.Minute, true}} {
		res, err := p.Evaluate(context.Background(), target(start, "app"), start.Add(step.at))
		if err != nil || res[0].Err != nil {
			t.Fatal(err, res[0].Err)
		}
		if got := len(res[0].Matches) == 1; got != step.want {
			t.Errorf("at +%s: matched %v, want %v", step.at, got, step.want)
		}
	}
}

func TestInstantRuleUndefined(t *testing.T) {
	p := program(t, Options{}, Rule{Name: "never", Module: `package a
never := 1 if input.now == "then"
recreate contains "app" if not never
`})
	res, err := p.Evaluate(context.Background(), target(time.Now(), "app"), time.Now())
	if err != nil || res[0].Err != nil {
		t.Fatal(err, res[0].Err)
	}
	if len(res[0].Matches) != 1 {
		t.Errorf("matches %v, want app (never is undefined)", res[0].Matches)
	}
}
