package policy

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
)

func TestSandboxRejectsAtCompileTime(t *testing.T) {
	cases := map[string]struct {
		call string
		line int
	}{
		"http.send":          {`http.send({"method": "GET", "url": "http://example.com"})`, 5},
		"opa.runtime":        {`opa.runtime().env`, 5},
		"net.lookup_ip_addr": {`net.lookup_ip_addr("example.com")`, 5},
		"net.cidr_contains":  {`net.cidr_contains("10.0.0.0/8", "10.1.2.3")`, 5},
		"rand.intn":          {`rand.intn("x", 10)`, 5},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			module := "package evil\nimport rego.v1\nrecreate contains c.name if {\n\tsome c in input.containers\n\tx := " + tc.call + "\n\tx\n}\n"
			err := Check(context.Background(), []Rule{{Name: "ok", Module: notReadyRule}, {Name: "evil", Module: module}})
			var ce CompileErrors
			if !errors.As(err, &ce) {
				t.Fatalf("got %v, want CompileErrors", err)
			}
			if len(ce) == 0 || ce[0].Rule != "evil" || ce[0].Index != 1 || ce[0].Line != tc.line || !strings.Contains(ce[0].Message, name) {
				t.Errorf("got %v, want rule evil (index 1), line %d, naming %s", err, tc.line, name)
			}
		})
	}
}

func TestCompileRequiresRecreate(t *testing.T) {
	err := Check(context.Background(), []Rule{{Name: "empty", Module: "package x\nallow := true\n"}})
	if err == nil || !strings.Contains(err.Error(), `rule "empty": the module does not define the rule "recreate"`) {
		t.Errorf("got %v, want the missing recreate named", err)
	}
}

func TestCompileReportsEveryBrokenRule(t *testing.T) {
	err := Check(context.Background(), []Rule{
		{Name: "syntax", Module: "package x\nrecreate contains c if {\n  c := \n}\n"},
		{Name: "fine", Module: notReadyRule},
		{Name: "unsafe", Module: "package y\nrecreate contains c if { c == 1 }\n"},
	})
	var ce CompileErrors
	if !errors.As(err, &ce) {
		t.Fatalf("got %v", err)
	}
	rules := map[string]int{}
	for _, e := range ce {
		rules[e.Rule] = e.Line
	}
	if rules["syntax"] != 4 || rules["unsafe"] != 2 || len(rules) != 2 {
		t.Errorf("got %v, want errors for syntax (line 4) and unsafe (line 2) only", err)
	}
}

func TestTwoInlineRulesMayShareAPackage(t *testing.T) {
	if err := Check(context.Background(), []Rule{{Name: "a", Module: notReadyRule}, {Name: "b", Module: notReadyRule}}); err != nil {
		t.Errorf("two rules with package custom: %v", err)
	}
}

// TestSchemaAnnotationsReadNoFile: a rule's METADATA schemas (a $ref to a
// file: or http: URL, or an inline schema that refers on) are refused
// before anything is read, with the same message whether the file exists,
// is missing or holds anything; json.match_schema and json.verify_schema,
// which resolve references too, are not built-ins of the sandbox.
func TestSchemaAnnotationsReadNoFile(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("root:$6$salt$hash\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	schema := filepath.Join(dir, "schema.json")
	if err := os.WriteFile(schema, []byte(`{"type": "object", "properties": {"containers": {"type": "number"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	refusal := func(annotation string) string {
		module := "package evil\nimport rego.v1\n\n# METADATA\n# schemas:\n#   - input: " + annotation + "\nrecreate contains c.name if {\n\tsome c in input.containers\n}\n"
		err := Check(context.Background(), []Rule{{Name: "evil", Module: module}})
		var ce CompileErrors
		if !errors.As(err, &ce) || len(ce) != 1 || ce[0].Rule != "evil" {
			t.Fatalf("schema %s: got %v, want the rule refused", annotation, err)
		}
		return ce[0].Message
	}
	want := refusal(`{"$ref": "file://` + filepath.Join(dir, "missing") + `"}`)
	if !strings.Contains(want, "schemas") {
		t.Errorf("refusal %q does not name the schemas annotation", want)
	}
	for _, annotation := range []string{
		`{"$ref": "file://` + secret + `"}`,
		`{"$ref": "file://` + schema + `"}`,
		`{"$ref": "http://127.0.0.1:1/schema.json"}`,
		`{"type": "object", "properties": {"containers": {"$ref": "file://` + secret + `"}}}`,
	} {
		if got := refusal(annotation); got != want {
			t.Errorf("schema %s refused with %q, want %q as for a missing file: the refusal tells what the file holds", annotation, got, want)
		}
	}
	for _, builtin := range []string{"json.match_schema", "json.verify_schema"} {
		if slices.ContainsFunc(Capabilities().Builtins, func(b *ast.Builtin) bool { return b.Name == builtin }) {
			t.Errorf("%s is a built-in of the sandbox: it reads the files and URLs a schema refers to", builtin)
		}
	}
}
