package crr

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// Metrics of ContainerRecreateRequests, by who asked for them (source:
// policy, kubectl or manual). No pod or request names: their number is
// unbounded.
var (
	crrCreated = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rejuv_crr_created_total",
		Help: "ContainerRecreateRequests created, by namespace and source (kubectl for kubectl rejuv, a pod's or a workload's restart; policy; or manual for anyone else).",
	}, []string{"namespace", "source"})
	crrCompleted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rejuv_crr_completed_total",
		Help: "ContainerRecreateRequests completed, by namespace, source and result (Succeeded, Failed, PartiallySucceeded).",
	}, []string{"namespace", "source", "result"})
	crrDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "rejuv_crr_duration_seconds",
		Help:    "Time from a ContainerRecreateRequest's creation to its completion, by source and result.",
		Buckets: []float64{0.5, 1, 2, 3, 5, 10, 20, 30, 60, 120, 300, 600},
	}, []string{"source", "result"})
	crrInFlight = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "rejuv_crr_in_flight",
		Help: "ContainerRecreateRequests not completed, by namespace and source, counted every 15 seconds by the leader.",
	}, []string{"namespace", "source"})
	crrPastDeadline = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "rejuv_crr_past_deadline",
		Help: "ContainerRecreateRequests not completed after their activeDeadlineSeconds, by namespace: the manager ends them at the deadline, so they stay only while it cannot.",
	}, []string{"namespace"})
)

// initCompleted makes the completion counters of a namespace and source
// exist at 0 from its first request on, so that a rate or an increase
// over them counts the first completion of each result too.
func initCompleted(namespace, source string) {
	for _, result := range []v1beta1.ContainerRecreateRequestResult{v1beta1.ResultSucceeded, v1beta1.ResultFailed, v1beta1.ResultPartiallySucceeded} {
		crrCompleted.WithLabelValues(namespace, source, string(result))
	}
}

// RegisterMetrics adds the CRR metrics to reg.
func RegisterMetrics(reg prometheus.Registerer) {
	reg.MustRegister(crrCreated, crrCompleted, crrDuration, crrInFlight, crrPastDeadline)
}
