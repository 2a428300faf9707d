package recreatepolicy

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/planner"
)

// Metrics of policies. Policy, rule and signal names are bounded by what
// operators write; pod names never appear.
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
	ruleErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rejuv_policy_rule_errors_total",
		Help: "Pods a rule failed to evaluate for, by rule; rule is empty when the policy's program failed as a whole (its deadline or memory limit).",
	}, []string{"policy", "namespace", "rule"})
	noDataPods = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "rejuv_policy_no_data_pods",
		Help: "Pods a rule could not judge at the policy's last evaluation for want of a signal, by rule and signal (memory, memory.history, startedAt, signals.NAME, or what a custom rule names); the entries of the status's noData, at most 32.",
	}, []string{"policy", "namespace", "rule", "signal"})
	decisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rejuv_policy_decisions_total",
		Help: "Decisions on candidate recreations, by trigger (schedule or rule) and outcome (Created, DryRun, Skipped, UpToDate, Error, or the gate that held it back).",
	}, []string{"policy", "namespace", "trigger", "outcome"})
	heldBack = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "rejuv_policy_held_back",
		Help: "Candidates each gate held back at the policy's last pass.",
	}, []string{"policy", "namespace", "gate"})
	heldBackSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "rejuv_policy_held_back_seconds",
		Help:    "How long a gate held a candidate back, from the first pass it did to the pass it let the candidate through, another gate took over, or the candidate went away.",
		Buckets: []float64{10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600, 86400},
	}, []string{"policy", "namespace", "gate"})
	halted = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "rejuv_policy_halted",
		Help: "1 while the policy's Halted condition is True (blast radius, evaluation budget, a rule the sandbox stopped or whose evaluation the manager's restart interrupted, a failed scheduled run, or a run too large to record), else 0.",
	}, []string{"policy", "namespace"})
	limits = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "rejuv_policy_budget",
		Help: "The policy's limits, by budget: max_unavailable (pods rollout.maxUnavailable lets be unavailable at once) and max_per_hour (limits.maxPerHour; no series without one).",
	}, []string{"policy", "namespace", "budget"})
	limitsUsed = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "rejuv_policy_budget_used",
		Help: "What the policy's last pass left of each budget used: max_unavailable (selected pods not Ready or being recreated) and max_per_hour (requests created in the last hour).",
	}, []string{"policy", "namespace", "budget"})
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
	missedRuns = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rejuv_schedule_missed_runs_total",
		Help: "Scheduled runs not started because the manager saw them more than startingDeadlineSeconds late.",
	}, []string{"policy", "namespace"})
	passesDeferred = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rejuv_policy_passes_deferred_total",
		Help: "Passes over the policy put off for a few seconds because its namespace's policies already held their share of the policy workers.",
	}, []string{"policy", "namespace"})
)

// policyVecs are the metrics labelled by policy, which a deleted policy
// takes with it.
var policyVecs = []*prometheus.MetricVec{
	evaluations.MetricVec, evaluationDuration.MetricVec, ruleErrors.MetricVec, noDataPods.MetricVec,
	decisions.MetricVec, heldBack.MetricVec, heldBackSeconds.MetricVec, halted.MetricVec,
	limits.MetricVec, limitsUsed.MetricVec, selectedPods.MetricVec, activeRecreations.MetricVec, nextRun.MetricVec, missedRuns.MetricVec,
	passesDeferred.MetricVec,
}

// RegisterMetrics adds the policy metrics to reg.
func RegisterMetrics(reg prometheus.Registerer) {
	reg.MustRegister(evaluations, evaluationDuration, ruleErrors, noDataPods, decisions, heldBack, heldBackSeconds, halted,
		limits, limitsUsed, selectedPods, activeRecreations, nextRun, missedRuns, passesDeferred)
}

// forgetMetrics drops a deleted policy's series.
func forgetMetrics(namespace, name string) {
	labels := prometheus.Labels{"policy": name, "namespace": namespace}
	for _, v := range policyVecs {
		v.DeletePartialMatch(labels)
	}
}

// observeNoData replaces the policy's no-data series with those of one
// evaluation, the entries its status lists: they are bounded there, and
// a custom rule's signal is text it makes up.
func observeNoData(p *v1alpha1.RecreatePolicy, noData []v1alpha1.RuleNoData) {
	noDataPods.DeletePartialMatch(prometheus.Labels{"policy": p.Name, "namespace": p.Namespace})
	for _, nd := range noData {
		noDataPods.WithLabelValues(p.Name, p.Namespace, nd.Rule, nd.Signal).Set(float64(nd.Pods))
	}
}

// observeDecisions sets how many candidates each gate held back in one
// pass, every gate named (0 when it held none back).
func observeDecisions(p *v1alpha1.RecreatePolicy, decided []v1alpha1.Decision) {
	count := map[v1alpha1.DecisionOutcome]int{}
	for _, d := range decided {
		count[d.Outcome]++
	}
	for _, gate := range planner.Gates {
		heldBack.WithLabelValues(p.Name, p.Namespace, string(gate)).Set(float64(count[gate]))
		if count[gate] > 0 {
			// The hold's histogram exists, empty, from its start, so
			// that a rate over it counts the hold's end.
			heldBackSeconds.WithLabelValues(p.Name, p.Namespace, string(gate))
		}
	}
}

// observeHolds records the holds that ended.
func observeHolds(p *v1alpha1.RecreatePolicy, ended []planner.EndedHold) {
	for _, h := range ended {
		heldBackSeconds.WithLabelValues(p.Name, p.Namespace, string(h.Gate)).Observe(h.Held.Seconds())
	}
}

// observeHalted sets the halted gauge from the policy's Halted condition.
func observeHalted(p *v1alpha1.RecreatePolicy) {
	v := 0.0
	if meta.IsStatusConditionTrue(p.Status.Conditions, v1alpha1.ConditionHalted) {
		v = 1
	}
	halted.WithLabelValues(p.Name, p.Namespace).Set(v)
}

// observeLimits sets each budget of the policy and how much of it the
// pass left used.
func observeLimits(p *v1alpha1.RecreatePolicy, s *planner.Situation) {
	limits.WithLabelValues(p.Name, p.Namespace, "max_unavailable").Set(float64(s.MaxUnavailable))
	limitsUsed.WithLabelValues(p.Name, p.Namespace, "max_unavailable").Set(float64(s.Unavailable))
	if s.MaxPerHour == nil {
		limits.DeleteLabelValues(p.Name, p.Namespace, "max_per_hour")
		limitsUsed.DeleteLabelValues(p.Name, p.Namespace, "max_per_hour")
		return
	}
	limits.WithLabelValues(p.Name, p.Namespace, "max_per_hour").Set(float64(*s.MaxPerHour))
	limitsUsed.WithLabelValues(p.Name, p.Namespace, "max_per_hour").Set(float64(s.CreatedLastHour))
}

// observe sets the metrics of one pass as planned and acted on, and takes
// its decisions into the policy's holds.
func (r *Reconciler) observe(pl *planner.Plan) {
	p := pl.Policy
	switch {
	case pl.Verdicts != nil:
		observeNoData(p, pl.Verdicts.NoData)
	case pl.RulesDecided:
		// No rules.
		observeNoData(p, nil)
	}
	if !pl.NextRun.IsZero() {
		nextRun.WithLabelValues(p.Name, p.Namespace).Set(float64(pl.NextRun.Unix()))
		missedRuns.WithLabelValues(p.Name, p.Namespace).Add(float64(pl.MissedRuns))
	}
	selectedPods.WithLabelValues(p.Name, p.Namespace).Set(float64(len(pl.In.Pods)))
	activeRecreations.WithLabelValues(p.Name, p.Namespace).Set(float64(pl.In.Facts.Own))
	observeLimits(p, pl.Situation)
	decided := pl.Decisions()
	observeDecisions(p, decided)
	observeHalted(p)
	key := types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
	ended := r.state.updateHolds(key, decided, func(kind planner.TriggerKind) bool { return kind == planner.TriggerSchedule || pl.RulesDecided }, pl.In.Now)
	observeHolds(p, ended)
}
