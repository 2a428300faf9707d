package cri

import (
	"github.com/prometheus/client_golang/prometheus"
)

var (
	runtimeInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "rejuv_daemon_runtime_info",
		Help: "The container runtime the daemon talks to (value 1), by runtime name and version.",
	}, []string{"runtime", "version"})
	criRequestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "rejuv_daemon_cri_request_duration_seconds",
		Help:    "Duration of the daemon's CRI calls, by method and gRPC code.",
		Buckets: []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
	}, []string{"method", "code"})
)

// RegisterMetrics adds the CRI metrics to reg, which the daemon serves.
func RegisterMetrics(reg prometheus.Registerer) {
	reg.MustRegister(runtimeInfo, criRequestDuration)
}
