package catalogue

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/rejuv-dev/rejuv/config/dashboards"
	"github.com/rejuv-dev/rejuv/test/cluster/harness"
)

// others are the metrics the dashboards and alerts read that Rejuv's code
// does not define, and who serves them.
var others = map[string]string{
	"up": "Prometheus, for every target",
	"controller_runtime_webhook_latency_seconds_bucket": "controller-runtime, in the manager",
	"controller_runtime_reconcile_errors_total":         "controller-runtime, in the manager",
	"process_resident_memory_bytes":                     "client_golang's process collector, in both",
	"process_cpu_seconds_total":                         "client_golang's process collector, in both",
	"kube_daemonset_status_number_ready":                "kube-state-metrics",
	"kube_daemonset_status_desired_number_scheduled":    "kube-state-metrics",
}

var metricName = regexp.MustCompile(`\b(?:rejuv|controller_runtime|process|kube|workqueue|go)_[a-z0-9_]+\b|\bup\b`)

// TestQueriesNameServedMetrics: every metric a dashboard panel, a
// dashboard variable or an alert rule reads is one the binaries serve
// (histograms by their series' names), or one listed above with who
// serves it.
func TestQueriesNameServedMetrics(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	served := Series(all)
	check := func(where, expr string) {
		names := metricName.FindAllString(expr, -1)
		if len(names) == 0 {
			t.Errorf("%s: %q reads no metric", where, expr)
		}
		for _, n := range names {
			if _, ok := served[n]; !ok && others[n] == "" {
				t.Errorf("%s: %s is not served (%s)", where, n, expr)
			}
		}
	}
	boards, err := dashboards.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range boards {
		for _, p := range d.Panels {
			if len(p.Queries) == 0 {
				t.Errorf("%s: panel %q has no query", d.File, p.Title)
			}
			for _, expr := range p.Queries {
				check(d.File+": "+p.Title, expr)
			}
		}
		for name, expr := range d.Variables {
			check(d.File+": variable "+name, expr)
		}
	}
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "config", "prometheus", "rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct{ Alert, Expr string }
		}
	}
	if err := yaml.Unmarshal(data, &rules); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			check("alert "+r.Alert, strings.TrimSpace(r.Expr))
			n++
		}
	}
	if n < 10 {
		t.Errorf("%d alert rules read, want all of config/prometheus/rules.yaml", n)
	}
}
