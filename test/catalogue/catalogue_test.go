package catalogue

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rejuv-dev/rejuv/test/docgen"
)

// TestMetricsDoc: docs/metrics.md is the template with the manager's and
// the daemon's metrics as tables; it fails while the file is stale.
func TestMetricsDoc(t *testing.T) {
	manager, daemon := registered(t)
	doc := strings.NewReplacer("{{manager}}", table(manager), "{{daemon}}", table(daemon)).
		Replace(docgen.Template(t, "test/catalogue/testdata/metrics.md.tmpl"))
	docgen.Settle(t, "docs/metrics.md", doc)
}

// TestEveryMetricIsRejuvsAndSaysWhatItIs: the binaries' own metrics carry
// the prefix, a help text, and none a label of unbounded values.
func TestEveryMetricIsRejuvsAndSaysWhatItIs(t *testing.T) {
	manager, daemon := registered(t)
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

// registered is the manager's and the daemon's metrics.
func registered(t *testing.T) (manager, daemon []Metric) {
	t.Helper()
	manager, err := Manager()
	if err != nil {
		t.Fatal(err)
	}
	daemon, err = Daemon()
	if err != nil {
		t.Fatal(err)
	}
	return manager, daemon
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
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", m.Name, m.Type, labels, cell(m.Help))
	}
	return strings.TrimSuffix(b.String(), "\n")
}
