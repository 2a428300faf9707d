package executor

import (
	"github.com/prometheus/client_golang/prometheus"
)

var (
	recreations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rejuv_daemon_recreations_total",
		Help: "Containers the daemon finished recreating, by result (Succeeded, Failed).",
	}, []string{"result"})
	phaseSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "rejuv_daemon_recreate_phase_seconds",
		Help:    "Time spent in each phase of a container's recreation: prestop, stop, restart_wait (stopped to the new container's start), min_started (the new container's start to success).",
		Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
	}, []string{"phase"})
)

// RegisterMetrics adds the executor's metrics to reg, which the daemon
// serves.
func RegisterMetrics(reg prometheus.Registerer) {
	reg.MustRegister(recreations, phaseSeconds)
}
