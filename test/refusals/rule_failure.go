package refusals

import "github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"

// RuleFailure is a rule that compiles, so the policy is admitted, and fails
// when it runs: healer/recreatepolicy's TestEveryRuleFailure runs it in a
// policy on a real API server and checks the policy's status and events.
type RuleFailure struct {
	// Doing says in words what the rule does.
	Doing string
	// Rego is the rule's module.
	Rego string
	// Pods is how many pods the policy selects; none means one. Only a
	// pass over several pods can run out of the evaluation budget.
	Pods int
	// Report is where the policy says so.
	Report Report
	// Message is what the condition's message and the event's note
	// contain.
	Message string
}

// Report is where a policy reports a failure: a condition of its status
// with the condition's reason, and a Warning event's reason.
type Report struct {
	Condition, Reason, Event string
}

var (
	// RuleFailed is a rule's failure for a pod: its result is dropped,
	// the policy keeps acting on the other rules' results, and Ready
	// (still True) says which rule failed for how many pods.
	RuleFailed = Report{Condition: v1alpha1.ConditionReady, Reason: v1alpha1.ReasonEvaluationFailed, Event: v1alpha1.ReasonEvaluationFailed}
	// OverBudget is a pass over the evaluation budget: the policy halts,
	// creating nothing, and its rules are not evaluated again until its
	// spec changes.
	OverBudget = Report{Condition: v1alpha1.ConditionHalted, Reason: v1alpha1.ReasonEvaluationBudget, Event: "Halted"}
	// Stopped is a rule the sandbox stopped (a built-in's bound, or the
	// deadline or memory bound three evaluations in a row): the policy
	// halts, creating nothing, and its rules are not evaluated again until
	// its spec changes.
	Stopped = Report{Condition: v1alpha1.ConditionHalted, Reason: v1alpha1.ReasonRuleStopped, Event: "Halted"}
)
