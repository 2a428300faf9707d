package policy

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
)

// TestBuiltinsAreScopedToTheEngine: the sandbox's bounds and Rejuv's own
// built-ins hold in the engine's queries, mocked or not, and nowhere else:
// after the engine compiled and evaluated rules in this process, OPA's
// own rego package (what a program importing this package beside OPA, or
// a test, evaluates with) still has OPA's built-ins as OPA made them and
// knows nothing of Rejuv's.
func TestBuiltinsAreScopedToTheEngine(t *testing.T) {
	evaluate := func(body string) RuleResult {
		t.Helper()
		module := "package scoped\nimport rego.v1\nr(a, b) := [a, b]\nrecreate contains c.name if {\n\tsome c in input.containers\n\t" + body + "\n}\n"
		res, err := program(t, Options{}, Rule{Name: "scoped", Module: module}).Evaluate(context.Background(), target(time.Now(), "app"), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return res[0]
	}
	if res := evaluate(`count(numbers.range(1, 200000)) > 0`); res.Err == nil || !strings.Contains(res.Err.Error(), "over the sandbox's bound") {
		t.Errorf("numbers.range past its bound in the engine: %v (matches %v), want stopped at the sandbox's bound", res.Err, res.Matches)
	}
	if res := evaluate(`count(r(1, 200000)) > 0 with r as numbers.range`); res.Err == nil || !strings.Contains(res.Err.Error(), "over the sandbox's bound") {
		t.Errorf("a function replaced by numbers.range past its bound: %v (matches %v), want stopped at the sandbox's bound", res.Err, res.Matches)
	}
	if res := evaluate(`count(numbers.range(1, 2)) == 3 with numbers.range as [1, 2, 3]`); res.Err != nil || len(res.Matches) != 1 {
		t.Errorf("numbers.range replaced by a value: %v (matches %v), want a match", res.Err, res.Matches)
	}
	if res := evaluate(`rejuv.format_bytes(52428800) == "50Mi"`); res.Err != nil || len(res.Matches) != 1 {
		t.Errorf("rejuv.format_bytes in the engine: %v (matches %v), want a match", res.Err, res.Matches)
	}

	rs, err := rego.New(rego.Query(`x := count(numbers.range(1, 200000))`)).Eval(context.Background())
	if err != nil || len(rs) != 1 || rs[0].Bindings["x"] == nil {
		t.Fatalf("OPA's rego package: numbers.range(1, 200000) = %v (%v), want OPA's unbounded result", rs, err)
	}
	if got := rs[0].Bindings["x"]; got.(interface{ String() string }).String() != "200000" {
		t.Errorf("OPA's rego package counts %v numbers, want 200000", got)
	}
	if _, err := rego.New(rego.Query(`x := rejuv.format_number(1)`)).Eval(context.Background()); err == nil || !strings.Contains(err.Error(), "undefined function rejuv.format_number") {
		t.Errorf("OPA's rego package knows rejuv.format_number: %v", err)
	}
	for name := range ast.BuiltinMap {
		if strings.HasPrefix(name, "rejuv.") {
			t.Errorf("OPA's table of built-ins holds %s", name)
		}
	}
}
