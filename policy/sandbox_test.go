package policy

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

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
		"net.cidr_expand":    {`net.cidr_expand("10.0.0.0/8")`, 5},
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

// TestBuiltinsThatAllocateByArgumentAreBounded: a built-in whose result
// grows with a number it is given (numbers.range, numbers.range_step,
// bits.lsh) refuses sizes past the sandbox's bound with an error of the
// rule, rather than allocating whatever the rule asks, which could take
// down the manager in one call that no deadline interrupts.
func TestBuiltinsThatAllocateByArgumentAreBounded(t *testing.T) {
	const refs = "sprintf(\"%01000000d\", [1])\n\tbig := [x | some i in numbers.range(1, 1000)]\n\ty := "
	cases := map[string]string{
		"numbers.range":      `numbers.range(1, 200000)`,
		"numbers.range huge": `numbers.range(0, 10000000000)`,
		"numbers.range_step": `numbers.range_step(0, 2000000, 2)`,
		"bits.lsh":           `bits.lsh(1, 100000)`,
		// A thousand references to one 1 MB string cost little to build
		// (and building more is bounded by the deadline); read whole,
		// in one call no deadline interrupts, they are 1 GB.
		"concat":       refs + `concat(",", big)`,
		"concat sep":   `concat(sprintf("%01000000d", [1]), ["a", "b"])`,
		"sprintf":      refs + `sprintf("%v", [big])`,
		"sprintf pads": `sprintf(concat("", ["%01000000d" | some i in numbers.range(1, 10)]), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10])`,
		"json.marshal": refs + `json.marshal(big)`,
		"yaml.marshal": refs + `yaml.marshal(big)`,
		"sort":         refs + `sort(big)`,
		"print":        refs + "1\n\tprint(big)",
		"equal":        refs + `big == array.reverse(big)`,
	}
	for name, call := range cases {
		t.Run(name, func(t *testing.T) {
			module := "package big\nimport rego.v1\nrecreate contains c.name if {\n\tsome c in input.containers\n\tx := " + call + "\n\tx != 0\n}\n"
			// A deadline long enough to build the operands: the bound, not
			// the deadline, must stop the call.
			p := program(t, Options{Deadline: 20 * time.Second}, Rule{Name: "big", Module: module})
			res, err := p.Evaluate(context.Background(), target(time.Now(), "app"), time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if res[0].Err == nil || !strings.Contains(res[0].Err.Error(), "over the sandbox's bound") {
				t.Errorf("got %v (matches %v), want the rule stopped at the sandbox's bound", res[0].Err, res[0].Matches)
			}
		})
	}
	// Within the bound they work as OPA documents.
	module := "package small\nimport rego.v1\nrecreate contains c.name if {\n\tsome c in input.containers\n\tcount(numbers.range(1, 1000)) == 1000\n\tbits.lsh(1, 10) == 1024\n" +
		"\tconcat(\",\", [\"a\", \"b\"]) == \"a,b\"\n\tsprintf(\"%05d %s\", [7, \"x\"]) == \"00007 x\"\n\tjson.marshal({\"a\": [1]}) == `{\"a\":[1]}`\n\tsort([2, 1]) == [1, 2]\n" +
		"\tcount(sprintf(\"%01000000d\", [1])) == 1000000\n}\n"
	res, err := program(t, Options{}, Rule{Name: "small", Module: module}).Evaluate(context.Background(), target(time.Now(), "app"), time.Now())
	if err != nil || res[0].Err != nil || len(res[0].Matches) != 1 {
		t.Errorf("within the bound: %v %v %v", err, res[0].Err, res[0].Matches)
	}
}
