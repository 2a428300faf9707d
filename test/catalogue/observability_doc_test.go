package catalogue

import (
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/rejuv-dev/rejuv/config/dashboards"
	"github.com/rejuv-dev/rejuv/test/docgen"
)

// TestObservabilityDoc: docs/observability.md is the template with the
// dashboards' panels and the alert rules as tables; it fails while the
// file is stale.
func TestObservabilityDoc(t *testing.T) {
	all, err := dashboards.All()
	if err != nil {
		t.Fatal(err)
	}
	alerts, err := alertTable([]byte(docgen.Template(t, "config/prometheus/rules.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.NewReplacer("{{dashboards}}", dashboardTables(all), "{{alerts}}", alerts).
		Replace(docgen.Template(t, "test/catalogue/testdata/observability.md.tmpl"))
	docgen.Settle(t, "docs/observability.md", doc)
}

// dashboardTables lists each dashboard's panels with what they answer.
func dashboardTables(all []dashboards.Dashboard) string {
	var b strings.Builder
	for i, d := range all {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "### %s (`%s`)\n\n%s\n\n| panel | shows |\n|---|---|\n", d.Title, d.File, d.Description)
		for _, p := range d.Panels {
			fmt.Fprintf(&b, "| %s | %s |\n", p.Title, cell(p.Description))
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// alertTable lists the alert rules: when each fires and what it says.
func alertTable(rulesFile []byte) (string, error) {
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert       string
				For         string
				Labels      map[string]string
				Annotations map[string]string
			}
		}
	}
	if err := yaml.Unmarshal(rulesFile, &rules); err != nil {
		return "", fmt.Errorf("read config/prometheus/rules.yaml: %w", err)
	}
	var b strings.Builder
	b.WriteString("| alert | severity | for | what it means |\n|---|---|---|---|\n")
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			forText := r.For
			if forText == "" {
				forText = "at once"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", r.Alert, r.Labels["severity"], forText, cell(r.Annotations["description"]))
		}
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// cell escapes text for a table cell.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", "\\|"), "\n", " ")
}
