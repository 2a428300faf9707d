package policy

import (
	"context"
	"strings"
	"testing"
)

// TestCompileRefusesRulesThatAreNeverASet: a recreate or no_data rule the
// type checker proves is a string, a number, an object or an array would
// fail on every pod; it is refused when the policy is written, at its line.
// A rule whose type depends on the input may be a set and compiles.
func TestCompileRefusesRulesThatAreNeverASet(t *testing.T) {
	refused := map[string]string{
		"string":         "recreate := \"app\"",
		"partial object": "recreate[x] := 1 if x := \"app\"",
		"default number": "default recreate := 1",
		"array":          "recreate := [\"app\"]",
		"object":         "recreate := {\"container\": \"app\"}",
		"no_data string": "recreate contains \"app\" if false\nno_data := \"memory\"",
	}
	for name, body := range refused {
		t.Run(name, func(t *testing.T) {
			err := Check(context.Background(), []Rule{{Name: "r", Module: "package x\n" + body + "\n"}})
			if err == nil || !strings.Contains(err.Error(), ", never a set: write ") || !strings.Contains(err.Error(), `rule "r": line `) {
				t.Errorf("got %v, want the rule refused as never a set, with its line", err)
			}
		})
	}
	admitted := map[string]string{
		"contains":           "recreate contains \"app\" if true",
		"set literal":        "recreate := {\"app\"}",
		"set comprehension":  "recreate := {c | some c in input.containers}",
		"from the input":     "recreate := input.pod.metadata.labels",
		"with a set no_data": "recreate contains \"app\" if false\nno_data contains {\"container\": \"app\", \"signal\": \"memory\"} if true",
	}
	for name, body := range admitted {
		t.Run(name, func(t *testing.T) {
			if err := Check(context.Background(), []Rule{{Name: "r", Module: "package x\n" + body + "\n"}}); err != nil {
				t.Errorf("refused: %v", err)
			}
		})
	}
}
