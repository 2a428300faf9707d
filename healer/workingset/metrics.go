package workingset

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Metrics of the sampler, by source (metrics.k8s.io or prometheus).
var (
	sampleDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "rejuv_workingset_sample_duration_seconds",
		Help:    "Time one call to the memory source took for one namespace.",
		Buckets: prometheus.ExponentialBuckets(0.002, 4, 7),
	}, []string{"source"})
	sampleErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rejuv_workingset_sample_errors_total",
		Help: "Calls to the memory source for one namespace that failed.",
	}, []string{"source"})
	windows = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "rejuv_workingset_windows",
		Help: "Containers whose working set window the manager keeps.",
	}, []string{"source"})
)

// RegisterMetrics adds the sampler's metrics to controller-runtime's
// registry.
func RegisterMetrics() {
	metrics.Registry.MustRegister(sampleDuration, sampleErrors, windows)
}

func observeSample(source string, took time.Duration, err error) {
	sampleDuration.WithLabelValues(source).Observe(took.Seconds())
	if err != nil {
		sampleErrors.WithLabelValues(source).Inc()
	}
}
