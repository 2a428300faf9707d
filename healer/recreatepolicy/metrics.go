package recreatepolicy

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Metrics of policies. Policy names are bounded by what operators write;
// pod names never appear.
var (
	evaluations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rejuv_policy_evaluations_total",
		Help: "Evaluations of a policy's rules for one pod, by result (match, no_match, no_data, error).",
	}, []string{"policy", "namespace", "result"})
	evaluationDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "rejuv_policy_evaluation_duration_seconds",
		Help:    "Time to evaluate all of a policy's rules for all its selected pods once.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 4, 9),
	}, []string{"policy", "namespace"})
	decisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rejuv_policy_decisions_total",
		Help: "Decisions on candidate recreations, by trigger (schedule or rule) and outcome (Created, DryRun, or the gate that held it back).",
	}, []string{"policy", "namespace", "trigger", "outcome"})
	selectedPods = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "rejuv_policy_selected_pods",
		Help: "Pods the policy's selector matches.",
	}, []string{"policy", "namespace"})
	activeRecreations = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "rejuv_policy_active_recreations",
		Help: "The policy's ContainerRecreateRequests in flight.",
	}, []string{"policy", "namespace"})
	nextRun = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "rejuv_schedule_next_run_timestamp_seconds",
		Help: "When the policy's schedule fires next, as a Unix time.",
	}, []string{"policy", "namespace"})
)

// RegisterMetrics adds the policy metrics to controller-runtime's registry.
func RegisterMetrics() {
	metrics.Registry.MustRegister(evaluations, evaluationDuration, decisions, selectedPods, activeRecreations, nextRun)
}

// forgetMetrics drops a deleted policy's series.
func forgetMetrics(namespace, name string) {
	labels := prometheus.Labels{"policy": name, "namespace": namespace}
	for _, v := range []*prometheus.MetricVec{evaluations.MetricVec, decisions.MetricVec, evaluationDuration.MetricVec, selectedPods.MetricVec, activeRecreations.MetricVec, nextRun.MetricVec} {
		v.DeletePartialMatch(labels)
	}
}
