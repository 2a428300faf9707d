package executor

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"
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
	queueDepth = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "rejuv_daemon_queue_depth",
		Help: "Pods whose requests wait in the daemon's work queue for a worker (the queue holds a pod once, whatever its requests).",
	})
	queueWait = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "rejuv_daemon_queue_wait_seconds",
		Help:    "Time a pod's requests waited in the daemon's work queue before a worker took them.",
		Buckets: []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30},
	})
	queueRetries = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "rejuv_daemon_queue_retries_total",
		Help: "Pods the daemon put back in its queue after an error with one of their requests, to retry with backoff.",
	})
)

// RegisterMetrics adds the executor's metrics to reg, which the daemon
// serves.
func RegisterMetrics(reg prometheus.Registerer) {
	reg.MustRegister(recreations, phaseSeconds, queueDepth, queueWait, queueRetries)
}

// queueMetrics gives the executor's work queue the metrics above; the
// queue's other measures are left out (phaseSeconds times the work).
type queueMetrics struct{}

func (queueMetrics) NewDepthMetric(string) workqueue.GaugeMetric       { return queueDepth }
func (queueMetrics) NewAddsMetric(string) workqueue.CounterMetric      { return noMetric{} }
func (queueMetrics) NewLatencyMetric(string) workqueue.HistogramMetric { return queueWait }
func (queueMetrics) NewWorkDurationMetric(string) workqueue.HistogramMetric {
	return noMetric{}
}
func (queueMetrics) NewUnfinishedWorkSecondsMetric(string) workqueue.SettableGaugeMetric {
	return noMetric{}
}
func (queueMetrics) NewLongestRunningProcessorSecondsMetric(string) workqueue.SettableGaugeMetric {
	return noMetric{}
}
func (queueMetrics) NewRetriesMetric(string) workqueue.CounterMetric { return queueRetries }

// noMetric is a measure the daemon does not keep.
type noMetric struct{}

func (noMetric) Inc()            {}
func (noMetric) Dec()            {}
func (noMetric) Set(float64)     {}
func (noMetric) Observe(float64) {}
