package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// datasource is the dashboards' data source: the one the datasource
// variable names.
var datasource = common.DataSourceRef{Type: new("prometheus"), Uid: new("${datasource}")}

// query is one PromQL query of a panel.
type query struct {
	expr, legend string
}

func q(expr, legend string) query { return query{expr: expr, legend: legend} }

func (q query) builder(refID string) *prometheus.DataqueryBuilder {
	b := prometheus.NewDataqueryBuilder().Expr(q.expr).RefId(refID).Datasource(datasource).EditorMode(prometheus.QueryEditorModeCode)
	if q.legend != "" {
		b = b.LegendFormat(q.legend)
	}
	return b
}

var refIDs = []string{"A", "B", "C", "D", "E", "F"}

// graph is a time series panel, a third of the width unless span says.
func graph(title, description, unit string, span uint32, queries ...query) *timeseries.PanelBuilder {
	p := timeseries.NewPanelBuilder().Title(title).Description(description).Unit(unit).Datasource(datasource).
		Height(8).Span(span).Min(0).FillOpacity(10).
		Legend(common.NewVizLegendOptionsBuilder().ShowLegend(true).DisplayMode(common.LegendDisplayModeList).Placement(common.LegendPlacementBottom))
	for i, qr := range queries {
		p = p.WithTarget(qr.builder(refIDs[i]))
	}
	return p
}

// single is a stat panel of one instant value, with noValue shown when
// the query has no series (nothing halted, nothing in flight).
func single(title, description, unit, noValue string, qr query) *stat.PanelBuilder {
	return stat.NewPanelBuilder().Title(title).Description(description).Unit(unit).Datasource(datasource).
		Height(4).Span(4).NoValue(noValue).GraphMode(common.BigValueGraphModeNone).
		ReduceOptions(common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"})).
		WithTarget(qr.builder("A").Instant())
}

// list is a table of an instant query's series, their labels as columns.
func list(title, description string, span uint32, qr query) *table.PanelBuilder {
	return table.NewPanelBuilder().Title(title).Description(description).Datasource(datasource).
		Height(8).Span(span).CellHeight(common.TableCellHeightSm).
		WithTarget(qr.builder("A").Instant().Format(prometheus.PromQueryFormatTable)).
		WithTransformation(dashboard.DataTransformerConfig{Id: "organize", Options: map[string]any{
			"excludeByName": map[string]any{"Time": true, "__name__": true},
		}})
}

// datasourceVariable picks the Prometheus data source.
func datasourceVariable() *dashboard.DatasourceVariableBuilder {
	return dashboard.NewDatasourceVariableBuilder("datasource").Label("Data source").Type("prometheus")
}

// labelVariable offers the values of a label, several at once or all.
func labelVariable(name, label, expr string) *dashboard.QueryVariableBuilder {
	return dashboard.NewQueryVariableBuilder(name).Label(label).
		Query(dashboard.StringOrMap{String: new(expr)}).Definition(expr).
		Datasource(datasource).Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
		Sort(dashboard.VariableSortAlphabeticalAsc).Multi(true).IncludeAll(true).AllValue(".*")
}

// board starts a dashboard with Rejuv's defaults.
func board(uid, title, description string) *dashboard.DashboardBuilder {
	return dashboard.NewDashboardBuilder(title).Uid(uid).Description(description).
		Tags([]string{"rejuv", "kubernetes"}).Refresh("30s").Time("now-3h", "now").
		Timezone(common.TimeZoneBrowser).Tooltip(dashboard.DashboardCursorSyncCrosshair).Editable()
}
