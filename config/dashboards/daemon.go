package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// ofDaemon picks the chosen daemons.
const ofDaemon = `instance=~"$instance"`

// daemonView answers, per node: does the daemon reach the runtime, what
// did it recreate, how long each phase took, and what it costs.
func daemonView() *dashboard.DashboardBuilder {
	return board("rejuv-daemon", "Rejuv / Nodes and daemons", "Each node's daemon: the runtime, recreations and their phases, CRI calls, the work queue, CPU and memory.").
		WithVariable(datasourceVariable()).
		WithVariable(labelVariable("instance", "Daemon", `label_values(rejuv_daemon_runtime_up, instance)`)).
		WithPanel(list("Runtimes", "The container runtime each daemon talks to, and whether it answered the last check (every 5 seconds).", 12,
			q(`rejuv_daemon_runtime_info{`+ofDaemon+`} * on (instance) group_left () rejuv_daemon_runtime_up`, ""))).
		WithPanel(graph("Recreations", "Containers recreated a second, by daemon and result.", "ops", 12,
			q(`sum by (instance, result) (rate(rejuv_daemon_recreations_total{`+ofDaemon+`}[$__rate_interval]))`, "{{instance}} {{result}}"))).
		WithPanel(graph("Phases", "90th percentile of each phase of a recreation: prestop, stop, restart_wait (the kubelet starting the new container), min_started.", "s", 12,
			q(`histogram_quantile(0.9, sum by (le, phase) (rate(rejuv_daemon_recreate_phase_seconds_bucket{`+ofDaemon+`}[$__rate_interval])))`, "{{phase}}"))).
		WithPanel(graph("CRI calls", "The daemon's calls to the runtime a second, by method and gRPC code.", "ops", 12,
			q(`sum by (method, code) (rate(rejuv_daemon_cri_request_duration_seconds_count{`+ofDaemon+`}[$__rate_interval]))`, "{{method}} {{code}}"))).
		WithPanel(graph("CRI latency", "99th percentile of the daemon's calls to the runtime, by method.", "s", 12,
			q(`histogram_quantile(0.99, sum by (le, method) (rate(rejuv_daemon_cri_request_duration_seconds_bucket{`+ofDaemon+`}[$__rate_interval])))`, "{{method}}"))).
		WithPanel(graph("Work queue", "Requests waiting for a worker, and the 90th percentile of their wait.", "short", 12,
			q(`sum by (instance) (rejuv_daemon_queue_depth{`+ofDaemon+`})`, "depth {{instance}}"),
			q(`histogram_quantile(0.9, sum by (le) (rate(rejuv_daemon_queue_wait_seconds_bucket{`+ofDaemon+`}[$__rate_interval])))`, "p90 wait (s)"))).
		WithPanel(graph("Memory", "Resident memory of each daemon.", "bytes", 12,
			q(`process_resident_memory_bytes{job=~".*daemon-metrics", `+ofDaemon+`}`, "{{instance}}"))).
		WithPanel(graph("CPU", "CPU each daemon uses, in cores.", "short", 12,
			q(`rate(process_cpu_seconds_total{job=~".*daemon-metrics", `+ofDaemon+`}[$__rate_interval])`, "{{instance}}")))
}
