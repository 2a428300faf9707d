package policy

import (
	"context"
	"errors"
	"strings"
	"testing"
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
