package rules

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

func TestBuiltins(t *testing.T) {
	want := []string{"max-age", "memory-leak", "memory-near-limit", "restart-storm", "stuck-readiness", "stuck-startup"}
	var names []string
	for _, r := range Builtins() {
		names = append(names, r.Name)
		t.Run(r.Name, func(t *testing.T) {
			if r.Title != r.Name {
				t.Errorf("title %q, want %q", r.Title, r.Name)
			}
			if want := "rejuv.rules." + strings.ReplaceAll(r.Name, "-", "_"); r.Package != want {
				t.Errorf("package %q, want %q", r.Package, want)
			}
			if r.Module != r.Name+".rego" {
				t.Errorf("module %q, want %q", r.Module, r.Name+".rego")
			}
			if !strings.Contains(r.Source, "package "+r.Package+"\n") {
				t.Errorf("source does not declare package %s", r.Package)
			}
			if len(r.Description) < 80 {
				t.Errorf("description %q is too short to explain the rule", r.Description)
			}
			if len(r.Parameters) == 0 {
				t.Errorf("no parameters")
			}
			for _, p := range r.Parameters {
				if p.Description == "" || p.Default == nil {
					t.Errorf("parameter %s lacks a description or a default", p.Name)
				}
			}
			if !slices.IsSortedFunc(r.Parameters, func(a, b Parameter) int { return strings.Compare(a.Name, b.Name) }) {
				t.Errorf("parameters are not sorted by name")
			}
			got, ok := Lookup(r.Name)
			if !ok || got.Source != r.Source {
				t.Errorf("Lookup(%q) = %v, %v", r.Name, got.Name, ok)
			}
		})
	}
	if !slices.Equal(names, want) {
		t.Errorf("Builtins() = %v, want %v", names, want)
	}
	if _, ok := Lookup("memory_leak"); ok {
		t.Errorf("Lookup found a rule by its package name")
	}
	if _, ok := Lookup("memory-leak_test"); ok {
		t.Errorf("Lookup found a test module")
	}
}

func TestBuiltinsReturnsCopies(t *testing.T) {
	Builtins()[0].Parameters[0].Name = "changed"
	if Builtins()[0].Parameters[0].Name == "changed" {
		t.Error("a caller changed the catalog")
	}
}

func TestDefaultsResolve(t *testing.T) {
	for _, r := range Builtins() {
		resolved, err := r.Resolve(nil)
		if err != nil {
			t.Errorf("%s: defaults do not resolve: %v", r.Name, err)
		}
		if len(resolved) != len(r.Parameters) {
			t.Errorf("%s: resolved %d parameters, want %d", r.Name, len(resolved), len(r.Parameters))
		}
	}
}

// TestMalformedRules checks that load refuses each way a rule can break the
// contract, so that such a rule never reaches Builtins.
func TestMalformedRules(t *testing.T) {
	const body = "recreate contains {\"container\": \"x\", \"reason\": \"y\"} if false\n\nno_data contains {\"container\": \"x\", \"signal\": \"y\"} if false\n"
	meta := func(lines ...string) string {
		var b strings.Builder
		b.WriteString("# METADATA\n")
		for _, l := range lines {
			b.WriteString("# " + l + "\n")
		}
		return b.String()
	}
	good := meta("title: good", "description: A rule that is fine.", "custom:", "  parameters:",
		"    after:", "      type: duration", "      default: 10m", "      description: How long.")
	tests := []struct {
		name, src, want string
	}{
		{"good", good + "package rejuv.rules.good\n\n" + body, ""},
		{"no-params", meta("title: no-params", "description: Fine without parameters.") + "package rejuv.rules.no_params\n\n" + body, ""},
		{"wrong-package", meta("title: wrong-package", "description: d") + "package rejuv.rules.other\n\n" + body, "want rejuv.rules.wrong_package"},
		{"no-meta", "package rejuv.rules.no_meta\n\n" + body, "no METADATA"},
		{"title", meta("title: other", "description: d") + "package rejuv.rules.title\n\n" + body, "want the rule name"},
		{"description", meta("title: description") + "package rejuv.rules.description\n\n" + body, "no description"},
		{"no-recreate", meta("title: no-recreate", "description: d") + "package rejuv.rules.no_recreate\n\nno_data contains \"x\" if false\n", "does not define recreate"},
		{"no-nodata", meta("title: no-nodata", "description: d") + "package rejuv.rules.no_nodata\n\nrecreate contains \"x\" if false\n", "does not define no_data"},
		{"yaml", meta("title: yaml", "description: [d") + "package rejuv.rules.yaml\n\n" + body, "yaml"},
		{"params-list", meta("title: params-list", "description: d", "custom:", "  parameters: [a]") + "package rejuv.rules.params_list\n\n" + body, "not a map"},
		{"param-type", meta("title: param-type", "description: d", "custom:", "  parameters:", "    a: {type: time, default: 1, description: d}") + "package rejuv.rules.param_type\n\n" + body, `parameter "a": type time is not one of`},
		{"param-key", meta("title: param-key", "description: d", "custom:", "  parameters:", "    a: {type: number, default: 1, description: d, min: 0}") + "package rejuv.rules.param_key\n\n" + body, `unknown key "min"`},
		{"param-doc", meta("title: param-doc", "description: d", "custom:", "  parameters:", "    a: {type: number, default: 1}") + "package rejuv.rules.param_doc\n\n" + body, "no description"},
		{"param-default", meta("title: param-default", "description: d", "custom:", "  parameters:", "    a: {type: number, description: d}") + "package rejuv.rules.param_default\n\n" + body, "no default"},
		{"default-type", meta("title: default-type", "description: d", "custom:", "  parameters:", "    a: {type: duration, default: 10, description: d}") + "package rejuv.rules.default_type\n\n" + body, "is not a string"},
		{"default-bad", meta("title: default-bad", "description: d", "custom:", "  parameters:", "    a: {type: duration, default: 10 minutes, description: d}") + "package rejuv.rules.default_bad\n\n" + body, `default: "10 minutes" is not a duration`},
		{"default-range", meta("title: default-range", "description: d", "custom:", "  parameters:", "    a: {type: fraction, default: 2, description: d}") + "package rejuv.rules.default_range\n\n" + body, "not a fraction"},
		{"default-integer", meta("title: default-integer", "description: d", "custom:", "  parameters:", "    a: {type: integer, default: 2.5, description: d}") + "package rejuv.rules.default_integer\n\n" + body, "not an integer"},
		{"allow-zero", meta("title: allow-zero", "description: d", "custom:", "  parameters:", "    a: {type: duration, default: 0s, description: d, allowZero: yes please}") + "package rejuv.rules.allow_zero\n\n" + body, "allowZero is not a boolean"},
		{"syntax", meta("title: syntax", "description: d") + "package rejuv.rules.syntax\n\nrecreate contains x if {\n", "rego_parse_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{
				tt.name + ".rego":      {Data: []byte(tt.src)},
				tt.name + "_test.rego": {Data: []byte("this is not Rego and must not be read")},
			}
			rules, err := load(fsys)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("load: %v", err)
			case tt.want == "" && (len(rules) != 1 || rules[0].Name != tt.name):
				t.Fatalf("load = %v, want the one rule %s", rules, tt.name)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("load error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}
