package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// policyView answers, for chosen policies: what do their rules say of the
// pods, what do the gates do with the candidates, and for how long.
func policyView() *dashboard.DashboardBuilder {
	return board("rejuv-policy", "Rejuv / Policy", "One policy's evaluations, decisions, gates, missing signals and schedule.").
		WithVariable(datasourceVariable()).
		WithVariable(labelVariable("namespace", "Namespace", `label_values(rejuv_policy_selected_pods, namespace)`)).
		WithVariable(labelVariable("policy", "Policy", `label_values(rejuv_policy_selected_pods{namespace=~"$namespace"}, policy)`)).
		WithPanel(single("Selected pods", "Pods the policies' selectors match.", "short", "0",
			q(`sum(rejuv_policy_selected_pods{`+ofPolicy+`})`, ""))).
		WithPanel(single("Recreating", "The policies' requests in flight.", "short", "0",
			q(`sum(rejuv_policy_active_recreations{`+ofPolicy+`})`, ""))).
		WithPanel(single("Created", "Requests the policies created in the time range.", "short", "0",
			q(`sum(increase(rejuv_policy_decisions_total{`+ofPolicy+`, outcome="Created"}[$__range]))`, ""))).
		WithPanel(single("Halted", "Policies halted now.", "short", "0",
			q(`count(rejuv_policy_halted{`+ofPolicy+`} == 1)`, ""))).
		WithPanel(single("Missed runs", "Scheduled runs skipped in the time range because the manager saw them after startingDeadlineSeconds.", "short", "0",
			q(`sum(increase(rejuv_schedule_missed_runs_total{`+ofPolicy+`}[$__range]))`, ""))).
		WithPanel(single("Next run", "When the first of the policies' schedules fires next.", "dateTimeFromNow", "no schedule",
			q(`min(rejuv_schedule_next_run_timestamp_seconds{`+ofPolicy+`}) * 1000`, ""))).
		WithPanel(graph("Evaluations", "Pods the rules judged a second, by result: match, no_match, no_data (a signal missing), error.", "ops", 8,
			q(`sum by (result) (rate(rejuv_policy_evaluations_total{`+ofPolicy+`}[$__rate_interval]))`, "{{result}}"))).
		WithPanel(graph("Evaluation time", "Time one pass over all selected pods takes; past the manager's --policy-evaluation-budget the policy halts.", "s", 8,
			q(`histogram_quantile(0.9, sum by (le, namespace, policy) (rate(rejuv_policy_evaluation_duration_seconds_bucket{`+ofPolicy+`}[$__rate_interval])))`, "p90 {{namespace}}/{{policy}}"),
			q(`histogram_quantile(0.99, sum by (le, namespace, policy) (rate(rejuv_policy_evaluation_duration_seconds_bucket{`+ofPolicy+`}[$__rate_interval])))`, "p99 {{namespace}}/{{policy}}"))).
		WithPanel(graph("Decisions", "Decisions a second, by trigger and outcome: Created, DryRun, Skipped, UpToDate, Error, or the gate that held a candidate back.", "ops", 8,
			q(`sum by (trigger, outcome) (rate(rejuv_policy_decisions_total{`+ofPolicy+`}[$__rate_interval]))`, "{{trigger}} {{outcome}}"))).
		WithPanel(graph("Held back, by gate", "Candidates each gate held back at the last pass.", "short", 8,
			q(`sum by (gate) (rejuv_policy_held_back{`+ofPolicy+`})`, "{{gate}}"))).
		WithPanel(graph("Time held back, by gate", "90th percentile of how long a gate held a candidate back before it let it through, another gate took over, or the candidate went away.", "s", 8,
			q(`histogram_quantile(0.9, sum by (le, gate) (rate(rejuv_policy_held_back_seconds_bucket{`+ofPolicy+`}[$__rate_interval])))`, "{{gate}}"))).
		WithPanel(graph("Budget use", "Used of each budget at the last pass: unavailable pods against rollout.maxUnavailable, requests of the last hour against limits.maxPerHour.", "short", 8,
			q(`max by (budget) (rejuv_policy_budget_used{`+ofPolicy+`})`, "used {{budget}}"),
			q(`max by (budget) (rejuv_policy_budget{`+ofPolicy+`})`, "limit {{budget}}"))).
		WithPanel(graph("No data", "Pods a rule could not judge at the last evaluation for want of a signal, by rule and signal.", "short", 12,
			q(`sum by (rule, signal) (rejuv_policy_no_data_pods{`+ofPolicy+`})`, "{{rule}} {{signal}}"))).
		WithPanel(graph("Rule errors", "Pod evaluations each rule failed a second; an empty rule is the policy's rules as a whole.", "ops", 12,
			q(`sum by (rule) (rate(rejuv_policy_rule_errors_total{`+ofPolicy+`}[$__rate_interval]))`, "{{rule}}")))
}
