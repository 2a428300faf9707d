package refusals

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rejuv-dev/rejuv/test/docgen"
)

// TestValidationDoc: docs/validation.md is the template with the rows of
// this package as tables; it fails while the file is stale.
func TestValidationDoc(t *testing.T) {
	doc := strings.NewReplacer(
		"{{policies}}", refusalTable(Policies),
		"{{requests}}", refusalTable(Requests),
		"{{rule failures}}", ruleFailureTable(RuleFailures),
	).Replace(docgen.Template(t, "test/refusals/testdata/validation.md.tmpl"))
	docgen.Settle(t, "docs/validation.md", doc)
}

// refusalTable renders refusals as a markdown table.
func refusalTable(rows []Refusal) string {
	var b strings.Builder
	b.WriteString("| input | refused by | field | message contains |\n|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | `%s` | %s |\n", cell(r.Input), r.Stage, r.Field, code(r.Message))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// ruleFailureTable renders rule failures as a markdown table.
func ruleFailureTable(rows []RuleFailure) string {
	var b strings.Builder
	b.WriteString("| what the rule does | condition | reason | Warning event | message contains |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | `%s` | `%s` | `%s` | %s |\n", cell(r.Doing), r.Report.Condition, r.Report.Reason, r.Report.Event, code(r.Message))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// cell escapes what would end a table cell.
func cell(s string) string {
	return strings.ReplaceAll(s, "|", `\|`)
}

// code quotes s as inline code, with a fence longer than any run of
// backticks in it.
func code(s string) string {
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		pad = " "
	}
	return fence + pad + cell(s) + pad + fence
}
