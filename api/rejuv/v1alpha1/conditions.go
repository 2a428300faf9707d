package v1alpha1

// Condition types of a RecreatePolicy.
const (
	// ConditionReady is True when the policy is valid and acting (or, with
	// dryRun, deciding); False names what stops it.
	ConditionReady = "Ready"
	// ConditionRulesCompiled is False when a rule does not compile or names
	// an unknown builtin or parameter.
	ConditionRulesCompiled = "RulesCompiled"
	// ConditionScheduleValid is False when the schedule, a window or a time
	// zone does not parse.
	ConditionScheduleValid = "ScheduleValid"
	// ConditionHalted is True when the policy stopped itself: its rules
	// matched more than limits.maxMatchingPercent, a scheduled run had a
	// failed request, a run was too large to record (RunTooLarge),
	// evaluating its rules took longer than the manager's per-pass budget,
	// the sandbox stopped one of its rules, or the manager restarted while
	// one ran past its bounds. The reasons share the condition: one that
	// quarantines the rules outranks a halted run, which outranks the
	// blast radius, and none replaces one that ranks higher.
	ConditionHalted = "Halted"
	// ConditionBudgetExhausted is True while limits.maxPerHour holds
	// recreations back.
	ConditionBudgetExhausted = "BudgetExhausted"
	// ConditionMemoryRecurring is True while limits.memoryRecurrence holds
	// back containers that a memory rule matched again soon after
	// recreating them; its message names them.
	ConditionMemoryRecurring = "MemoryRecurring"
)

// Condition reasons of a RecreatePolicy.
const (
	// ReasonActive: the policy is valid and acting.
	ReasonActive = "Active"
	// ReasonDryRun: the policy is valid and only records decisions.
	ReasonDryRun = "DryRun"
	// ReasonPaused: Rejuv is paused cluster-wide (PauseConfigMap).
	ReasonPaused = "Paused"
	// ReasonSuspended: spec.suspend is true.
	ReasonSuspended = "Suspended"
	// ReasonCompiled: every rule compiled.
	ReasonCompiled = "Compiled"
	// ReasonNoRules: the policy has no rules.
	ReasonNoRules = "NoRules"
	// ReasonCompileError: a rule does not compile.
	ReasonCompileError = "CompileError"
	// ReasonInvalidParameters: a builtin rule is unknown or has a bad
	// parameter.
	ReasonInvalidParameters = "InvalidParameters"
	// ReasonScheduleParsed: the schedule and windows parse.
	ReasonScheduleParsed = "Parsed"
	// ReasonNoSchedule: the policy has no schedule.
	ReasonNoSchedule = "NoSchedule"
	// ReasonInvalidSchedule: the schedule, a window or a time zone does not
	// parse.
	ReasonInvalidSchedule = "InvalidSchedule"
	// ReasonInvalidSpec: another part of the spec is invalid (selector,
	// container patterns).
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonBlastRadius: the rules matched more than maxMatchingPercent.
	ReasonBlastRadius = "BlastRadius"
	// ReasonEvaluationBudget: one pass over the selected pods took longer
	// than the manager's --policy-evaluation-budget; the rules are not
	// evaluated again until the spec changes.
	ReasonEvaluationBudget = "EvaluationBudget"
	// ReasonRuleStopped: the sandbox stopped a rule: a built-in's bound,
	// the deadline or the memory bound three evaluations in a row, or one
	// step that ran past them; the rules are not evaluated again until the
	// spec changes.
	ReasonRuleStopped = "RuleStopped"
	// ReasonEvaluationInterrupted: the manager restarted while a rule ran
	// past its bounds in one step (the step killed it, or the liveness
	// probe restarted it to stop the step); the rules are not evaluated
	// again until the spec changes.
	ReasonEvaluationInterrupted = "EvaluationInterrupted"
	// ReasonRunFailed: a request of a scheduled run failed.
	ReasonRunFailed = "RunFailed"
	// ReasonRunTooLarge: a run was not started because what it would
	// record of its pods (status.run.baseline) is over MaxBaselineBytes.
	ReasonRunTooLarge = "RunTooLarge"
	// ReasonNotHalted: the policy is not halted.
	ReasonNotHalted = "NotHalted"
	// ReasonRateLimited: maxPerHour is reached.
	ReasonRateLimited = "RateLimited"
	// ReasonWithinBudget: maxPerHour is not reached.
	ReasonWithinBudget = "WithinBudget"
	// ReasonLeakRecurred: a memory rule matched containers again within
	// limits.memoryRecurrence of recreating them.
	ReasonLeakRecurred = "LeakRecurred"
	// ReasonNoRecurrence: no container is held back for it.
	ReasonNoRecurrence = "NoRecurrence"
	// ReasonEvaluationFailed: a rule failed for some pods at the last
	// evaluation (the others' results stand).
	ReasonEvaluationFailed = "EvaluationFailed"
)
