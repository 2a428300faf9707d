package catalogue

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rejuv-dev/rejuv/test/cluster/harness"
)

// writeDocsEnv set to 1 makes TestMetricsDoc write docs/metrics.md
// instead of comparing it (make docs).
const writeDocsEnv = "REJUV_WRITE_DOCS"

// TestMetricsDoc: docs/metrics.md is the template with the manager's and
// the daemon's metrics as tables; it fails while the file is stale.
func TestMetricsDoc(t *testing.T) {
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := os.ReadFile(filepath.Join(root, "test", "catalogue", "testdata", "metrics.md.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	manager, err := Manager()
	if err != nil {
		t.Fatal(err)
	}
	daemon, err := Daemon()
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.NewReplacer("{{manager}}", table(manager), "{{daemon}}", table(daemon)).Replace(string(tmpl))
	path := filepath.Join(root, "docs", "metrics.md")
	if os.Getenv(writeDocsEnv) == "1" {
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile(path)
	if err != nil || string(have) != doc {
		t.Errorf("docs/metrics.md is stale (or missing: %v): run make docs", err)
	}
}

// TestEveryMetricIsRejuvsAndSaysWhatItIs: the binaries' own metrics carry
// the prefix, a help text, and none a label of unbounded values.
func TestEveryMetricIsRejuvsAndSaysWhatItIs(t *testing.T) {
	manager, err := Manager()
	if err != nil {
		t.Fatal(err)
	}
	daemon, err := Daemon()
	if err != nil {
		t.Fatal(err)
	}
	if len(manager) < 20 || len(daemon) < 8 {
		t.Fatalf("%d metrics of the manager, %d of the daemon: fewer than registered", len(manager), len(daemon))
	}
	for _, m := range append(manager, daemon...) {
		if !strings.HasPrefix(m.Name, "rejuv_") {
			t.Errorf("%s: not prefixed rejuv_", m.Name)
		}
		if len(m.Help) < 20 {
			t.Errorf("%s: help %q says too little", m.Name, m.Help)
		}
		for _, l := range m.Labels {
			switch l {
			case "pod", "container", "request", "name", "uid", "node", "reason_text", "message":
				t.Errorf("%s: label %s has no bound", m.Name, l)
			}
		}
	}
}

// table renders metrics as a markdown table.
func table(ms []Metric) string {
	var b strings.Builder
	b.WriteString("| metric | type | labels | meaning |\n|---|---|---|---|\n")
	for _, m := range ms {
		labels := "none"
		if len(m.Labels) > 0 {
			labels = "`" + strings.Join(m.Labels, "`, `") + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", m.Name, m.Type, labels, strings.ReplaceAll(m.Help, "|", "\\|"))
	}
	return strings.TrimSuffix(b.String(), "\n")
}
