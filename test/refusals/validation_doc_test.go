package refusals

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rejuv-dev/rejuv/test/cluster/harness"
)

// writeDocsEnv set to 1 makes TestValidationDoc write docs/validation.md
// instead of comparing it (make docs).
const writeDocsEnv = "REJUV_WRITE_DOCS"

// TestValidationDoc: docs/validation.md is the template with the rows of
// this package as tables; it fails while the file is stale.
func TestValidationDoc(t *testing.T) {
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := os.ReadFile(filepath.Join(root, "test", "refusals", "testdata", "validation.md.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.NewReplacer(
		"{{policies}}", refusalTable(Policies),
		"{{requests}}", refusalTable(Requests),
		"{{rule failures}}", ruleFailureTable(RuleFailures),
	).Replace(string(tmpl))
	path := filepath.Join(root, "docs", "validation.md")
	if os.Getenv(writeDocsEnv) == "1" {
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile(path)
	if err != nil || string(have) != doc {
		t.Errorf("docs/validation.md is stale (or missing: %v): run make docs", err)
	}
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
