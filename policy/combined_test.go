package policy

import (
	"context"
	"slices"
	"testing"
	"time"
)

// matchesOf evaluates p for a pod with containers app and proxy and returns
// each rule's matched container names, failing on any rule error.
func matchesOf(t *testing.T, p *Program) map[string][]string {
	t.Helper()
	res, err := p.Evaluate(context.Background(), target(time.Now(), "app", "proxy"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("rule %s: %v", r.Rule, r.Err)
		}
		for _, m := range r.Matches {
			out[r.Rule] = append(out[r.Rule], m.Container)
		}
	}
	return out
}

func TestParametersInCombinedQuery(t *testing.T) {
	p := program(t, Options{},
		// A constant path: the value is put in place of the read.
		Rule{Name: "by-name", Parameters: map[string]any{"name": "app"}, Module: `package a
recreate contains c.name if {
	some c in input.containers
	c.name == input.parameters.name
}`},
		// A path with a variable in it is read from the parameters document.
		Rule{Name: "by-list", Parameters: map[string]any{"names": []any{"proxy", "db"}}, Module: `package b
recreate contains c.name if {
	some c in input.containers
	c.name == input.parameters.names[_]
}`},
		// The whole object.
		Rule{Name: "whole", Parameters: map[string]any{"name": "proxy"}, Module: `package d
recreate contains n if {
	n := input.parameters.name
	count(input.parameters) == 1
}`},
	)
	if p.combined == nil {
		t.Fatal("rules were not combined")
	}
	got := matchesOf(t, p)
	want := map[string][]string{"by-name": {"app"}, "by-list": {"proxy"}, "whole": {"proxy"}}
	for rule, names := range want {
		if !slices.Equal(got[rule], names) {
			t.Errorf("rule %s matched %v, want %v", rule, got[rule], names)
		}
	}
}

// A read of a parameter that is not there is undefined, as it is in
// input.parameters. (The type checker refuses such reads in the combined
// query, so these rules are evaluated one by one.)
func TestMissingParameterIsUndefined(t *testing.T) {
	p := program(t, Options{},
		Rule{Name: "missing", Parameters: map[string]any{"name": "app"}, Module: `package c
recreate contains c.name if {
	some c in input.containers
	c.name == input.parameters.other
}
recreate contains "proxy" if input.parameters.name[0]`},
		Rule{Name: "present", Parameters: map[string]any{"name": "app"}, Module: "package d\nrecreate contains input.parameters.name if true\n"},
	)
	got := matchesOf(t, p)
	if len(got["missing"]) != 0 || !slices.Equal(got["present"], []string{"app"}) {
		t.Errorf("got %v, want only app from rule present", got)
	}
}

// A rule whose recreate is a complete rule may be undefined; it must not
// hide what the other rules of the policy found.
func TestUndefinedCompleteRuleBesideOthers(t *testing.T) {
	p := program(t, Options{},
		Rule{Name: "complete", Module: "package a\nrecreate := {\"app\"} if false\n"},
		Rule{Name: "set", Module: "package b\nrecreate contains \"proxy\" if true\n"},
	)
	if p.combined == nil {
		t.Fatal("rules were not combined")
	}
	got := matchesOf(t, p)
	if len(got["complete"]) != 0 || !slices.Equal(got["set"], []string{"proxy"}) {
		t.Errorf("got %v, want only proxy from rule set", got)
	}
}

// The evaluator's cache of rule values: a function called for more
// arguments than the small cache holds, and with, which pushes a frame.
func TestRuleValueCache(t *testing.T) {
	p := program(t, Options{}, Rule{Name: "cache", Module: `package a
double(x) := x * 2

total := sum([double(i) | some i in numbers.range(1, 100)])

names := {c.name | some c in input.containers}

recreate contains "app" if {
	total == 10100
	sum([double(i) | some i in numbers.range(1, 100)]) == 10100
}

recreate contains "proxy" if {
	count(names) == 2
	count(names) == 0 with input.containers as []
	count(names) == 2
}`})
	// Twice: the second evaluation reuses a cache the first released.
	for range 2 {
		if got := matchesOf(t, p)["cache"]; !slices.Equal(got, []string{"app", "proxy"}) {
			t.Fatalf("matched %v, want app and proxy", got)
		}
	}
}
