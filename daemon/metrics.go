package daemon

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/rejuv-dev/rejuv/daemon/cri"
	"github.com/rejuv-dev/rejuv/daemon/executor"
)

// runtimeUp says whether the container runtime answered the daemon's
// last check.
var runtimeUp = prometheus.NewGauge(prometheus.GaugeOpts{
	Name: "rejuv_daemon_runtime_up",
	Help: "1 when the container runtime answered the daemon's last check (every 5 seconds), 0 while it does not or none was found.",
})

// NewRegistry is the registry the daemon serves: the Go runtime's and
// the process's metrics, and the daemon's own.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	RegisterOwnMetrics(reg)
	return reg
}

// RegisterOwnMetrics adds the daemon's own metrics to reg.
func RegisterOwnMetrics(reg prometheus.Registerer) {
	reg.MustRegister(runtimeUp)
	cri.RegisterMetrics(reg)
	executor.RegisterMetrics(reg)
}
