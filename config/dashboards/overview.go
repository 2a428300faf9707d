package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// Selections the overview's and the policy view's queries share.
const (
	inNamespace = `namespace=~"$namespace"`
	ofPolicy    = `namespace=~"$namespace", policy=~"$policy"`
	// ofManager picks the manager's own series of metrics other
	// controllers serve too (controller-runtime's).
	ofManager = `job=~".*healer-metrics"`
)

// overview answers: what did Rejuv recreate, where, why, how well and how
// fast; which policies halted; how much of their budgets they use.
func overview() *dashboard.DashboardBuilder {
	return board("rejuv-overview", "Rejuv / Overview", "Recreations by namespace, policy and trigger, their results and durations, halted policies and budgets.").
		WithVariable(datasourceVariable()).
		WithVariable(labelVariable("namespace", "Namespace", `label_values({__name__=~"rejuv_policy_selected_pods|rejuv_crr_created_total"}, namespace)`)).
		WithVariable(labelVariable("policy", "Policy", `label_values(rejuv_policy_selected_pods{namespace=~"$namespace"}, policy)`)).
		WithRow(dashboard.NewRowBuilder("Recreations")).
		WithPanel(single("Recreations", "Requests that ended in the time range, whoever asked.", "short", "0",
			q(`sum(increase(rejuv_crr_completed_total{`+inNamespace+`}[$__range]))`, ""))).
		WithPanel(single("Success ratio", "Of the requests that ended in the time range, the share that Succeeded.", "percentunit", "no request ended",
			q(`sum(increase(rejuv_crr_completed_total{`+inNamespace+`, result="Succeeded"}[$__range])) / sum(increase(rejuv_crr_completed_total{`+inNamespace+`}[$__range]))`, ""))).
		WithPanel(single("In flight", "Requests not completed now (counted every 15 seconds).", "short", "0",
			q(`sum(rejuv_crr_in_flight{`+inNamespace+`})`, ""))).
		WithPanel(single("Halted policies", "Policies whose Halted condition is True: their rules act no more until it clears.", "short", "0",
			q(`count(rejuv_policy_halted{`+ofPolicy+`} == 1)`, ""))).
		WithPanel(single("Held back", "Candidates a gate held back at their policy's last pass.", "short", "0",
			q(`sum(rejuv_policy_held_back{`+ofPolicy+`})`, ""))).
		WithPanel(single("Rule errors", "Pod evaluations a rule failed in the time range.", "short", "0",
			q(`sum(increase(rejuv_policy_rule_errors_total{`+ofPolicy+`}[$__range]))`, ""))).
		WithPanel(graph("Recreations by namespace and source", "Requests created a second: by a policy, with kubectl rejuv, or by anyone else (manual).", "reqps", 8,
			q(`sum by (namespace, source) (rate(rejuv_crr_created_total{`+inNamespace+`}[$__rate_interval]))`, "{{namespace}} {{source}}"))).
		WithPanel(graph("Recreations by policy and trigger", "Requests policies created a second, by what asked: the schedule or a rule.", "reqps", 8,
			q(`sum by (namespace, policy, trigger) (rate(rejuv_policy_decisions_total{`+ofPolicy+`, outcome="Created"}[$__rate_interval]))`, "{{namespace}}/{{policy}} {{trigger}}"))).
		WithPanel(graph("Results", "Requests that ended a second, by result.", "reqps", 8,
			q(`sum by (result) (rate(rejuv_crr_completed_total{`+inNamespace+`}[$__rate_interval]))`, "{{result}}"))).
		WithPanel(graph("Duration, creation to completion", "Quantiles of how long a request took from its creation to its end, by result.", "s", 12,
			q(`histogram_quantile(0.5, sum by (le, result) (rate(rejuv_crr_duration_seconds_bucket[$__rate_interval])))`, "p50 {{result}}"),
			q(`histogram_quantile(0.9, sum by (le, result) (rate(rejuv_crr_duration_seconds_bucket[$__rate_interval])))`, "p90 {{result}}"),
			q(`histogram_quantile(0.99, sum by (le, result) (rate(rejuv_crr_duration_seconds_bucket[$__rate_interval])))`, "p99 {{result}}"))).
		WithPanel(graph("Budget use", "What each policy's last pass left used of its budgets: unavailable pods of rollout.maxUnavailable, requests of the last hour of limits.maxPerHour.", "percentunit", 12,
			q(`max by (namespace, policy, budget) (rejuv_policy_budget_used{`+ofPolicy+`}) / max by (namespace, policy, budget) (rejuv_policy_budget{`+ofPolicy+`} > 0)`, "{{namespace}}/{{policy}} {{budget}}"))).
		WithPanel(list("Halted policies", "Each halted policy; kubectl describe recreatepolicy says why.", 12,
			q(`max by (namespace, policy) (rejuv_policy_halted{`+ofPolicy+`}) == 1`, ""))).
		WithPanel(list("Recent failures", "Requests that did not succeed in the time range, by namespace, source and result; kubectl rejuv status -n NAMESPACE -o wide shows them with their messages.", 12,
			q(`sum by (namespace, source, result) (increase(rejuv_crr_completed_total{`+inNamespace+`, result!="Succeeded"}[$__range])) > 0`, ""))).
		WithRow(dashboard.NewRowBuilder("Manager")).
		WithPanel(graph("Webhook latency", "99th percentile of the manager's webhooks' answers, by webhook; the API server gives up after their timeoutSeconds.", "s", 8,
			q(`histogram_quantile(0.99, sum by (le, webhook) (rate(controller_runtime_webhook_latency_seconds_bucket{`+ofManager+`}[$__rate_interval])))`, "{{webhook}}"))).
		WithPanel(graph("Webhook refusals", "Requests the webhooks refused a second, by webhook and reason; InternalError is the webhook failing.", "reqps", 8,
			q(`sum by (webhook, reason) (rate(rejuv_webhook_refusals_total[$__rate_interval]))`, "{{webhook}} {{reason}}"))).
		WithPanel(graph("Reconcile errors", "Errors of the manager's controllers a second (each is retried with backoff).", "short", 8,
			q(`sum by (controller) (rate(controller_runtime_reconcile_errors_total{`+ofManager+`}[$__rate_interval]))`, "{{controller}}")))
}
