package builtins

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rejuv-dev/rejuv/policy"
	"github.com/rejuv-dev/rejuv/test/docgen"
)

// The lines around the table in docs/security.md.
const (
	tableStart = "<!-- built-ins: make docs writes this table from policy/builtins.go -->\n"
	tableEnd   = "<!-- end of built-ins -->\n"
)

// TestBuiltinsDoc: docs/security.md's table of built-ins is the audit the
// sandbox runs with.
func TestBuiltinsDoc(t *testing.T) {
	var b strings.Builder
	b.WriteString("| built-ins | verdict | why |\n|---|---|---|\n")
	for _, a := range policy.Audit() {
		names := make([]string, len(a.Names))
		for i, n := range a.Names {
			names[i] = "`" + n + "`"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", strings.Join(names, ", "), a.Verdict, strings.ReplaceAll(a.Why, "|", `\|`))
	}
	doc := docgen.Template(t, "docs/security.md")
	before, rest, ok := strings.Cut(doc, tableStart)
	_, after, ok2 := strings.Cut(rest, tableEnd)
	if !ok || !ok2 {
		t.Fatalf("docs/security.md has no lines %q and %q around the table of built-ins", tableStart, tableEnd)
	}
	docgen.Settle(t, "docs/security.md", before+tableStart+b.String()+tableEnd+after)
}
