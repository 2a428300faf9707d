// Package dashboards builds Rejuv's Grafana dashboards as code, with
// Grafana's foundation SDK: an overview, a policy view and a node and
// daemon view. config/render writes them into config/grafana.
package dashboards
