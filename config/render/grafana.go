package main

import (
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"

	"github.com/rejuv-dev/rejuv/config/dashboards"
)

const dashboardsHeader = `# Rejuv's Grafana dashboards in a ConfigMap, for Grafana's sidecar, which
# loads every ConfigMap labelled grafana_dashboard. Written by make
# manifests from config/dashboards; do not edit.
`

// writeDashboards writes each dashboard into grafana/ as a file, and all
// of them into a ConfigMap beside, removing files of dashboards that are
// no more.
func writeDashboards(configDir string, boards []dashboards.Dashboard) error {
	dir := filepath.Join(configDir, "grafana")
	old, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return err
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	data := map[string]string{}
	for _, d := range boards {
		if err := os.WriteFile(filepath.Join(dir, d.File), d.JSON, 0o644); err != nil {
			return err
		}
		data[d.File] = string(d.JSON)
	}
	out, err := yaml.Marshal(map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata": map[string]any{
			"name":      "rejuv-dashboards",
			"namespace": "rejuv-system",
			"labels":    map[string]string{"app.kubernetes.io/part-of": "rejuv", "grafana_dashboard": "1"},
		},
		"data": data,
	})
	if err != nil {
		return fmt.Errorf("write the dashboards' ConfigMap: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, "dashboards-configmap.yaml"), append([]byte(dashboardsHeader), out...), 0o644)
}
