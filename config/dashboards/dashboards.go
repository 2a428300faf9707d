package dashboards

import (
	"encoding/json"
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
)

// Dashboard is one dashboard as Grafana imports it.
type Dashboard struct {
	// File is its name in config/grafana.
	File               string
	Title, Description string
	JSON               []byte
	// Panels are its panels' titles and queries, in order.
	Panels []Panel
	// Variables are its query variables' queries, by name (the data
	// source variable asks Grafana, not Prometheus).
	Variables map[string]string
}

// Panel is a panel's title, what it shows, and its PromQL queries.
type Panel struct {
	Title, Description string
	Queries            []string
}

// All builds every dashboard.
func All() ([]Dashboard, error) {
	var out []Dashboard
	for _, d := range []struct {
		file  string
		build *dashboard.DashboardBuilder
	}{
		{"rejuv-overview.json", overview()},
		{"rejuv-policy.json", policyView()},
		{"rejuv-daemon.json", daemonView()},
	} {
		built, err := d.build.Build()
		if err != nil {
			return nil, fmt.Errorf("build dashboard %s: %w", d.file, err)
		}
		data, err := json.MarshalIndent(built, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("write dashboard %s: %w", d.file, err)
		}
		out = append(out, Dashboard{
			File: d.file, Title: *built.Title, Description: *built.Description, JSON: append(data, '\n'),
			Panels: panelsOf(built), Variables: variablesOf(built),
		})
	}
	return out, nil
}

func panelsOf(d dashboard.Dashboard) []Panel {
	var out []Panel
	for _, p := range d.Panels {
		if p.Panel == nil {
			continue
		}
		panel := Panel{Title: *p.Panel.Title, Description: *p.Panel.Description}
		for _, t := range p.Panel.Targets {
			switch pq := t.(type) {
			case prometheus.Dataquery:
				panel.Queries = append(panel.Queries, pq.Expr)
			case *prometheus.Dataquery:
				panel.Queries = append(panel.Queries, pq.Expr)
			}
		}
		out = append(out, panel)
	}
	return out
}

func variablesOf(d dashboard.Dashboard) map[string]string {
	out := map[string]string{}
	if d.Templating.List == nil {
		return out
	}
	for _, v := range d.Templating.List {
		if v.Type == dashboard.VariableTypeQuery && v.Query != nil && v.Query.String != nil {
			out[v.Name] = *v.Query.String
		}
	}
	return out
}
