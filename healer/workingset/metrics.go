package workingset

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
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
	lastSuccess = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "rejuv_workingset_last_success_timestamp_seconds",
		Help: "When a call to the memory source last succeeded, as a Unix time.",
	}, []string{"source"})
	windows = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "rejuv_workingset_windows",
		Help: "Containers whose working set window the manager keeps.",
	}, []string{"source"})
)

// RegisterMetrics adds the sampler's metrics to reg.
func RegisterMetrics(reg prometheus.Registerer) {
	reg.MustRegister(sampleDuration, sampleErrors, lastSuccess, windows)
}

// observeSample records one call to the source, begun at start.
func observeSample(source string, start time.Time, took time.Duration, err error) {
	sampleDuration.WithLabelValues(source).Observe(took.Seconds())
	if err != nil {
		sampleErrors.WithLabelValues(source).Inc()
		return
	}
	lastSuccess.WithLabelValues(source).Set(float64(start.Add(took).Unix()))
}
