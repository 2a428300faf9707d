package rules

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDocumented checks that docs/rules.md has a section for every built-in,
// a table row with the type and default of each parameter, and a row for each
// no_data signal, so the user documentation follows the rules.
func TestDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/rules.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	signal := regexp.MustCompile(`"signal": "([^"]+)"`)
	for _, r := range Builtins() {
		if !strings.Contains(doc, "\n### "+r.Name+"\n") {
			t.Errorf("no section ### %s", r.Name)
		}
		for _, p := range r.Parameters {
			row := fmt.Sprintf("| `%s` | %s | `%v` |", p.Name, p.Type, p.Default)
			if !strings.Contains(doc, row) {
				t.Errorf("%s: no row starting %s", r.Name, row)
			}
		}
		for _, m := range signal.FindAllStringSubmatch(r.Source, -1) {
			if row := fmt.Sprintf("| %s | `%s` |", r.Name, m[1]); !strings.Contains(doc, row) {
				t.Errorf("%s: no row starting %s", r.Name, row)
			}
		}
	}
}
