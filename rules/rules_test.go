package rules

import (
	"context"
	"encoding/json"
	"io/fs"
	"reflect"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/tester"

	"github.com/rejuv-dev/rejuv/policy"
)

// sandbox is the engine's capability set, so no built-in it denies slips
// into a rule.
func sandbox() *ast.Capabilities {
	return policy.Capabilities()
}

// modules parses every embedded .rego file, rules and tests.
func modules(t *testing.T) map[string]*ast.Module {
	t.Helper()
	names, err := fs.Glob(files, "*.rego")
	if err != nil {
		t.Fatal(err)
	}
	mods := make(map[string]*ast.Module, len(names))
	for _, name := range names {
		src, err := fs.ReadFile(files, name)
		if err != nil {
			t.Fatal(err)
		}
		mods[name], err = ast.ParseModuleWithOpts(name, string(src), ast.ParserOptions{RegoVersion: ast.RegoV1, Capabilities: sandbox()})
		if err != nil {
			t.Fatal(err)
		}
	}
	return mods
}

// TestRego runs the Rego unit tests of every rule under the sandbox
// capabilities, with built-in errors (a time that does not parse, a type
// mismatch) failing the test instead of making an expression undefined.
func TestRego(t *testing.T) {
	mods := modules(t)
	for _, r := range Builtins() {
		if mods[r.Name+"_test.rego"] == nil {
			t.Errorf("rule %s has no %s_test.rego", r.Name, r.Name)
		}
	}
	compiler := ast.NewCompiler().WithCapabilities(sandbox())
	var own []*tester.Builtin
	for _, b := range policy.OwnBuiltins() {
		own = append(own, &tester.Builtin{Decl: b.Decl, Func: b.Rego})
	}
	results, err := tester.NewRunner().
		SetCompiler(compiler).
		AddCustomBuiltins(own).
		SetModules(mods).
		RaiseBuiltinErrors(true).
		RunTests(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for res := range results {
		ran++
		if !res.Pass() {
			t.Errorf("%s", strings.TrimSpace(res.String()))
			if res.Error != nil {
				t.Errorf("  %v", res.Error)
			}
		}
	}
	if ran == 0 {
		t.Fatal("no Rego tests ran")
	}
	t.Logf("%d Rego tests", ran)
}

// TestRulesCompileAlone compiles each rule on its own, as the engine does,
// under the sandbox capabilities and in strict mode (no unused variables or
// imports, no deprecated built-ins).
func TestRulesCompileAlone(t *testing.T) {
	for _, r := range Builtins() {
		t.Run(r.Name, func(t *testing.T) {
			mod, err := ast.ParseModuleWithOpts(r.Module, r.Source, ast.ParserOptions{RegoVersion: ast.RegoV1})
			if err != nil {
				t.Fatal(err)
			}
			c := ast.NewCompiler().WithCapabilities(sandbox()).WithStrict(true)
			if c.Compile(map[string]*ast.Module{r.Module: mod}); c.Failed() {
				t.Fatal(c.Errors)
			}
		})
	}
}

// TestTestDefaultsMatchMetadata checks that the defaults the Rego tests use
// are what Resolve makes of the METADATA defaults, so the tests exercise the
// rules as the engine runs them.
func TestTestDefaultsMatchMetadata(t *testing.T) {
	for _, r := range Builtins() {
		t.Run(r.Name, func(t *testing.T) {
			want, err := r.Resolve(nil)
			if err != nil {
				t.Fatal(err)
			}
			test := strings.TrimSuffix(r.Module, ".rego") + "_test.rego"
			testSrc, err := fs.ReadFile(files, test)
			if err != nil {
				t.Fatal(err)
			}
			rs, err := rego.New(policy.WithOwnBuiltins(
				rego.Query("data."+r.Package+"_test.defaults"),
				rego.Module(r.Module, r.Source),
				rego.Module(test, string(testSrc)),
			)...).Eval(context.Background())
			if err != nil || len(rs) != 1 {
				t.Fatalf("%s defines no defaults: %v", test, err)
			}
			if got, want := numbers(t, rs[0].Expressions[0].Value), numbers(t, want); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: defaults are %v, the METADATA resolves to %v", test, got, want)
			}
		})
	}
}

func numbers(t *testing.T, v any) map[string]float64 {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]float64
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMissingSignalsAreNoData gives every rule a running container with every
// optional field null: none may recreate it (a missing value is never zero),
// none may fail on it, and each must say which signal it lacks.
func TestMissingSignalsAreNoData(t *testing.T) {
	input := map[string]any{
		"now":    "2026-03-01T12:00:00Z",
		"policy": map[string]any{"name": "p", "namespace": "shop"},
		"pod":    map[string]any{"metadata": map[string]any{"name": "web-0", "namespace": "shop", "uid": "u"}},
		"containers": []any{map[string]any{
			"name": "app", "kind": "container", "image": "shop/web:1.0",
			"ready": false, "started": nil, "state": "running", "startedAt": nil,
			"restartCount": 9, "lastTermination": nil, "notReadySince": nil,
			"resources": map[string]any{}, "memory": nil,
			"recreations": map[string]any{"total": 0, "last": nil},
		}},
	}
	for _, r := range Builtins() {
		t.Run(r.Name, func(t *testing.T) {
			input["parameters"], _ = r.Resolve(nil)
			rs, err := rego.New(policy.WithOwnBuiltins(
				rego.Query("recreate := data."+r.Package+".recreate; no_data := data."+r.Package+".no_data"),
				rego.Module(r.Module, r.Source),
				rego.Capabilities(sandbox()),
				rego.StrictBuiltinErrors(true),
				rego.Input(input),
			)...).Eval(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) != 1 {
				t.Fatalf("recreate or no_data undefined: %v", rs)
			}
			if got := rs[0].Bindings["recreate"]; !reflect.DeepEqual(got, []any{}) {
				t.Errorf("recreate = %v, want nothing", got)
			}
			noData, _ := rs[0].Bindings["no_data"].([]any)
			if len(noData) == 0 {
				t.Errorf("no_data is empty")
			}
			for _, nd := range noData {
				if m, _ := nd.(map[string]any); m["container"] != "app" || m["signal"] == "" {
					t.Errorf("no_data entry %v is not {container: app, signal: ...}", nd)
				}
			}
		})
	}
}
