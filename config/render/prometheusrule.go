package main

import (
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

const prometheusRuleHeader = `# Rejuv's alert rules as a PrometheusRule, for the Prometheus Operator:
# the groups of config/prometheus/rules.yaml, written by make manifests; do
# not edit. config/components/monitoring installs it.
`

// writePrometheusRule wraps the groups of prometheus/rules.yaml in a
// PrometheusRule, so that the plain rules file stays the one source.
func writePrometheusRule(configDir string) error {
	dir := filepath.Join(configDir, "prometheus")
	data, err := os.ReadFile(filepath.Join(dir, "rules.yaml"))
	if err != nil {
		return err
	}
	var rules struct {
		Groups []any `json:"groups"`
	}
	if err := yaml.UnmarshalStrict(data, &rules); err != nil {
		return fmt.Errorf("read prometheus/rules.yaml: %w", err)
	}
	if len(rules.Groups) == 0 {
		return fmt.Errorf("read prometheus/rules.yaml: no groups")
	}
	out, err := yaml.Marshal(map[string]any{
		"apiVersion": "monitoring.coreos.com/v1",
		"kind":       "PrometheusRule",
		"metadata": map[string]any{
			"name":      "rejuv-alerts",
			"namespace": "rejuv-system",
			"labels":    map[string]string{"app.kubernetes.io/part-of": "rejuv"},
		},
		"spec": map[string]any{"groups": rules.Groups},
	})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "prometheusrule.yaml"), append([]byte(prometheusRuleHeader), out...), 0o644)
}
