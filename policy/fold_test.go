package policy

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
)

// Folded calls give the number the evaluator computes; calls that are not
// on constants, or that fail, are left to it.
func TestFoldConstants(t *testing.T) {
	for _, tc := range []struct {
		expr   string
		folded bool
	}{
		{"0.9 * 100", true},
		{"(0.9 * 100) + round(2.5)", true},
		{"1 / 3", true},
		{"7 % 3", true},
		{"abs(-2.25) - floor(1.5) + ceil(0.1)", true},
		{"536870912 * 1000000", true},
		{"10 / 0", false},
		{"input.n * 100", false},
		{"count([1, 2]) * 100", false},
	} {
		folded, ok := fold(ast.MustParseBody("x := " + tc.expr)[0].Operand(1).Value)
		if ok != tc.folded {
			t.Errorf("%s: folded %v, want %v", tc.expr, ok, tc.folded)
			continue
		}
		if !ok {
			continue
		}
		rs, err := rego.New(rego.Query("x := "+tc.expr), rego.Input(map[string]any{"n": 1})).Eval(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		want, err := ast.InterfaceToValue(rs[0].Bindings["x"])
		if err != nil {
			t.Fatal(err)
		}
		if ast.Compare(folded, want) != 0 {
			t.Errorf("%s: folded to %v, the evaluator says %v", tc.expr, folded, want)
		}
	}
}

// A combined module's arithmetic on parameters is done when the policy is
// compiled, unless the module names a function after the built-in.
func TestCombinedModulesFoldTheirParameters(t *testing.T) {
	rule := func(module string) Rule {
		return Rule{Name: "r", Module: module, Parameters: map[string]any{"f": 0.9}}
	}
	folded := program(t, Options{}, rule(`package a
recreate contains {"container": "app", "reason": sprintf("%v", [input.parameters.f * 100])} if true`))
	if got := folded.combined.recreate.compiler.Modules["0.rego"].String(); !strings.Contains(got, "[90]") || strings.Contains(got, "mul(") {
		t.Errorf("the combined module still multiplies: %s", got)
	}
	res, err := folded.Evaluate(context.Background(), target(time.Now(), "app"), time.Now())
	if err != nil || len(res[0].Matches) != 1 || res[0].Matches[0].Reason != "90" {
		t.Errorf("reason: %+v, %v; want 90", res, err)
	}
	shadowed := program(t, Options{}, rule(`package a
mul(x, y) := 7
recreate contains {"container": "app", "reason": sprintf("%v", [input.parameters.f * 100])} if true`))
	res, err = shadowed.Evaluate(context.Background(), target(time.Now(), "app"), time.Now())
	if err != nil || len(res[0].Matches) != 1 || res[0].Matches[0].Reason != "7" {
		t.Errorf("with mul defined by the module, reason: %+v, %v; want 7", res, err)
	}
}
