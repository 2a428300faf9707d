package crr

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Metrics of ContainerRecreateRequests, by who asked for them (source:
// policy, kubectl or manual). No pod or request names: their number is
// unbounded.
var (
	crrCreated = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rejuv_crr_created_total",
		Help: "ContainerRecreateRequests created, by namespace and source.",
	}, []string{"namespace", "source"})
	crrCompleted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rejuv_crr_completed_total",
		Help: "ContainerRecreateRequests completed, by namespace, source and result (Succeeded, Failed, PartiallySucceeded).",
	}, []string{"namespace", "source", "result"})
	crrDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "rejuv_crr_duration_seconds",
		Help:    "Time from a ContainerRecreateRequest's creation to its completion, by source.",
		Buckets: []float64{0.5, 1, 2, 3, 5, 10, 20, 30, 60, 120, 300, 600},
	}, []string{"source"})
)

// RegisterMetrics adds the CRR metrics to controller-runtime's registry,
// which the manager serves.
func RegisterMetrics() {
	metrics.Registry.MustRegister(crrCreated, crrCompleted, crrDuration)
}
