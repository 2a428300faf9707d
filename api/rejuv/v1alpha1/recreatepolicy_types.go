package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// RecreatePolicySpec says which pods a policy watches, which of their
// containers it may recreate, and when: on a cron schedule (a rolling restart
// of every selected pod), when one of its Rego rules says so, once at a
// requested time (restartAt), or any of these.
// +kubebuilder:validation:XValidation:rule="has(self.schedule) || (has(self.rules) && size(self.rules) > 0) || has(self.restartAt)",message="a policy needs a schedule, rules or restartAt"
type RecreatePolicySpec struct {
	// Selector chooses the pods of the policy's namespace it applies to. An
	// empty selector ({}) selects every pod of the namespace.
	Selector metav1.LabelSelector `json:"selector"`

	// Containers names the containers that may be recreated; each entry is a
	// container name or a pattern with * (any run of characters) and ?
	// (one character), such as "app" or "proxy-*". Empty means every regular
	// container and every restartable init container (sidecar) of the pod.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=63
	// +listType=set
	Containers []string `json:"containers,omitempty"`

	// Schedule recreates the selected containers of every selected pod on a
	// cron schedule, as a rolling restart limited by rollout.maxUnavailable.
	// +optional
	Schedule *Schedule `json:"schedule,omitempty"`

	// RestartAt requests one rolling restart of every selected pod, as a
	// scheduled run does, once this time has come: the selected containers
	// that started before it are recreated in batches limited by
	// rollout.maxUnavailable. Setting a later time requests another
	// restart; a time already handled (status.restartedAt) is not run
	// again. kubectl rejuv restart sets it.
	// +optional
	RestartAt *metav1.Time `json:"restartAt,omitempty"`

	// Rules are evaluated for every selected pod on each change of the pod and
	// every evaluationInterval; any rule that matches a container triggers its
	// recreation, subject to limits, windows and rollout.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=map
	// +listMapKey=name
	Rules []Rule `json:"rules,omitempty"`

	// Signals are PromQL queries of the Prometheus the manager is given
	// (--prometheus-url), evaluated once per evaluation of the rules. A
	// series labelled with the namespace and a selected pod gives
	// input.signals[name] for that pod; one labelled with a container too
	// gives that container's input.containers[].signals[name]. A rule that
	// names a signal never recreates a pod for which the signal has no
	// value: a query that fails or returns nothing for the pod is no data.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=map
	// +listMapKey=name
	Signals []Signal `json:"signals,omitempty"`

	// EvaluationInterval is how often the rules are evaluated for every
	// selected pod even when no pod changed (signals such as memory and the
	// time keep moving).
	// +optional
	// +kubebuilder:default="30s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^(0|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$`
	EvaluationInterval *metav1.Duration `json:"evaluationInterval,omitempty"`

	// Recreate is the template of every ContainerRecreateRequest the policy
	// creates.
	// +optional
	// +kubebuilder:default={}
	Recreate RecreateTemplate `json:"recreate,omitzero"`

	// Rollout limits how many selected pods are disrupted at once.
	// +optional
	// +kubebuilder:default={}
	Rollout Rollout `json:"rollout,omitzero"`

	// Limits bound how often the policy recreates, and halt it when its rules
	// match too much of what it selects.
	// +optional
	// +kubebuilder:default={}
	Limits Limits `json:"limits,omitzero"`

	// Windows restrict when rule-triggered recreations may run: a recreation
	// is allowed when the current minute matches the cron expression of any
	// window. Empty means always. Runs (scheduled or requested) are not
	// restricted by windows.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	Windows []Window `json:"windows,omitempty"`

	// DryRun evaluates schedules and rules, records the decisions in status,
	// Events and metrics, and creates no ContainerRecreateRequest.
	// +optional
	DryRun bool `json:"dryRun,omitempty"`

	// Suspend stops the policy from acting: nothing is evaluated or recreated
	// until it is false again. Requests already created carry on.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// Schedule is a cron schedule for rolling restarts.
type Schedule struct {
	// Cron is a standard five-field cron expression (minute hour day-of-month
	// month day-of-week), or a descriptor such as @daily or @every 1h.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Cron string `json:"cron"`

	// TimeZone is the IANA time zone the cron expression is read in, such as
	// Europe/Berlin; daylight-saving changes are followed.
	// +optional
	// +kubebuilder:default="UTC"
	// +kubebuilder:validation:MaxLength=64
	TimeZone string `json:"timeZone,omitempty"`

	// StartingDeadlineSeconds is how late a run may start: a run missed by
	// more than this (the manager was down, the policy suspended) is skipped
	// and reported instead of being started late. At most a week.
	// +optional
	// +kubebuilder:default=300
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=604800
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"`
}

// Rule is one trigger: a built-in rule of the library with parameters, or an
// inline Rego module. Exactly one of builtin and rego is set.
// +kubebuilder:validation:XValidation:rule="has(self.builtin) != has(self.rego)",message="exactly one of builtin and rego must be set"
type Rule struct {
	// Name identifies the rule within the policy; it appears in decisions,
	// Events and the trigger label of the requests the rule causes.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// Builtin names a rule of Rejuv's library: memory-leak,
	// memory-near-limit, stuck-readiness, stuck-startup, max-age or
	// restart-storm (see docs/rules.md for each one's parameters).
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Builtin string `json:"builtin,omitempty"`

	// Parameters of the builtin rule; unset ones take the rule's defaults.
	// Durations are strings such as 10m, sizes are quantities such as 50Mi.
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	Parameters map[string]apiextensionsv1.JSON `json:"parameters,omitempty"`

	// Rego is an inline Rego v1 module defining the rule `recreate`: a set of
	// {"container": NAME, "reason": TEXT} objects (or bare container names)
	// for the pod in `input`. Any package name may be used.
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	Rego string `json:"rego,omitempty"`
}

// Signal is a named PromQL query whose values the rules read.
type Signal struct {
	// Name is the key of the values in input.signals and
	// input.containers[].signals.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-zA-Z_][a-zA-Z0-9_]*$`
	Name string `json:"name"`

	// Query is an instant PromQL query. Its series must carry the labels
	// namespace and pod (and container, for a container's value); series
	// of other namespaces are left out.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Query string `json:"query"`
}

// RecreateTemplate is what every ContainerRecreateRequest of the policy gets.
type RecreateTemplate struct {
	// Strategy of the requests: failure policy, ordering, unready grace,
	// minimum started time and termination grace, as in
	// ContainerRecreateRequest.spec.strategy. The requests'
	// unreadyGracePeriodSeconds is 5 unless set here (0 included): each pod
	// with the KruisePodReady readiness gate is out of its Services that
	// long before its containers stop.
	// +optional
	Strategy *appsv1beta1.ContainerRecreateRequestStrategy `json:"strategy,omitempty"`

	// ActiveDeadlineSeconds fails a request that has not completed this long
	// after its creation; at least 3 and at most a week (604800), as for a
	// request.
	// +optional
	// +kubebuilder:default=600
	// +kubebuilder:validation:Minimum=3
	// +kubebuilder:validation:Maximum=604800
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`

	// TTLSecondsAfterFinished deletes a finished request this long after it
	// completed; requests are kept at least as long as limits.maxPerHour
	// (an hour) and limits.cooldown look back, which count from them, and a
	// run's requests until the run is no longer Running (Rejuv's request
	// controller; OpenKruise's deletes at the TTL).
	// +optional
	// +kubebuilder:default=3600
	// +kubebuilder:validation:Minimum=0
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
}

// Rollout limits disruption across the selected pods.
type Rollout struct {
	// MaxUnavailable is how many selected pods may be unavailable (not Ready,
	// or with a recreation in flight) before the policy starts another
	// recreation: a number, or a percentage of the selected pods rounded
	// down, never less than one pod.
	// +optional
	// +kubebuilder:default="25%"
	// +kubebuilder:validation:XIntOrString
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// RespectPodDisruptionBudgets holds a recreation back while a
	// PodDisruptionBudget covering the pod allows no disruption.
	// +optional
	// +kubebuilder:default=true
	RespectPodDisruptionBudgets *bool `json:"respectPodDisruptionBudgets,omitempty"`

	// OnFailure says what a run (scheduled or requested) does when one of
	// its requests fails: Halt stops the run and reports it, Continue goes on with the
	// next batch.
	// +optional
	// +kubebuilder:default=Halt
	OnFailure RolloutFailurePolicy `json:"onFailure,omitempty"`
}

// RolloutFailurePolicy is what a run does after a failed request.
// +kubebuilder:validation:Enum=Halt;Continue
type RolloutFailurePolicy string

const (
	// RolloutHalt stops the run at the first failed request.
	RolloutHalt RolloutFailurePolicy = "Halt"
	// RolloutContinue reports a failed request and goes on.
	RolloutContinue RolloutFailurePolicy = "Continue"
)

// Limits bound the policy's recreations.
type Limits struct {
	// Cooldown is the least time between two recreations of one container
	// by this policy's rules (a run is not held back by it).
	// +optional
	// +kubebuilder:default="30m0s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^(0|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$`
	Cooldown *metav1.Duration `json:"cooldown,omitempty"`

	// MemoryRecurrence holds back a container that a rule reading the
	// memory signal matches again less than this long after such a rule
	// of this policy recreated it: a leak that comes back this fast is not
	// healed by recreating it, so it is reported (outcome Recurring, the
	// MemoryRecurring condition, a Warning event) instead of recreated over
	// and over. 0 recreates it each time, after the cooldown.
	// +optional
	// +kubebuilder:default="2h0m0s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^(0|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$`
	MemoryRecurrence *metav1.Duration `json:"memoryRecurrence,omitempty"`

	// MaxPerHour is the most recreation requests the policy creates in any
	// hour. Unset means no limit.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaxPerHour *int32 `json:"maxPerHour,omitempty"`

	// MaxMatchingPercent halts the policy when its rules match more than
	// this percentage of the selected pods at once (and at least
	// minMatchingToHalt pods): a rule that matches everything is more
	// likely wrong than right. Runs are not counted.
	// +optional
	// +kubebuilder:default=50
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	MaxMatchingPercent *int32 `json:"maxMatchingPercent,omitempty"`

	// MinMatchingToHalt is the fewest matching pods that halt the policy
	// for maxMatchingPercent: fewer never do, whatever their share, so
	// that a workload of one pod is healed (one of one is 100%).
	// +optional
	// +kubebuilder:default=2
	// +kubebuilder:validation:Minimum=1
	MinMatchingToHalt *int32 `json:"minMatchingToHalt,omitempty"`
}

// Window is a set of minutes in which rule-triggered recreations may run.
type Window struct {
	// Cron is a five-field cron expression; every minute it matches is inside
	// the window (for example "* 0-6 * * *" is midnight to 06:59).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Cron string `json:"cron"`

	// TimeZone is the IANA time zone the expression is read in.
	// +optional
	// +kubebuilder:default="UTC"
	// +kubebuilder:validation:MaxLength=64
	TimeZone string `json:"timeZone,omitempty"`
}

// RecreatePolicyStatus is what the policy controller observed and did.
type RecreatePolicyStatus struct {
	// ObservedGeneration is the generation of the spec this status is about.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready, RulesCompiled, ScheduleValid, Halted,
	// BudgetExhausted and MemoryRecurring.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// SelectedPods is how many pods the selector matched at the last
	// evaluation.
	// +optional
	SelectedPods int32 `json:"selectedPods"`

	// ActiveRecreations is how many of the policy's requests are in flight.
	// +optional
	ActiveRecreations int32 `json:"activeRecreations"`

	// LastScheduleTime is when the schedule last started a run.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`

	// NextScheduleTime is when the schedule starts its next run.
	// +optional
	NextScheduleTime *metav1.Time `json:"nextScheduleTime,omitempty"`

	// RestartedAt is the spec.restartAt the policy last handled: the
	// restart it started, or the one it reported it could not start.
	// +optional
	RestartedAt *metav1.Time `json:"restartedAt,omitempty"`

	// LastEvaluationTime is when the rules were last evaluated. A pass
	// that changes nothing else in the status leaves it until it is one
	// evaluationInterval old, so it is at most that stale.
	// +optional
	LastEvaluationTime *metav1.Time `json:"lastEvaluationTime,omitempty"`

	// Run is the latest run, scheduled or requested by restartAt: a
	// rolling restart of the selected pods in batches of at most
	// rollout.maxUnavailable.
	// +optional
	Run *Run `json:"run,omitempty"`

	// NoData lists the rules that could not judge some selected pods at the
	// last evaluation because a signal they need is missing, with the
	// signal and how many pods, at most MaxNoData.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	NoData []RuleNoData `json:"noData,omitempty"`

	// RecentDecisions are the policy's latest decisions, newest first, at
	// most MaxRecentDecisions.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	// +listType=atomic
	RecentDecisions []Decision `json:"recentDecisions,omitempty"`
}

// Run is one rolling restart: fired by the schedule, or requested by
// spec.restartAt.
type Run struct {
	// ScheduledTime is the time the schedule fired, or the restartAt
	// requested.
	ScheduledTime metav1.Time `json:"scheduledTime"`
	// Requested says the run was requested by spec.restartAt rather than
	// fired by the schedule.
	// +optional
	Requested bool `json:"requested,omitempty"`
	// State is Running, Completed or Halted.
	State RunState `json:"state"`
	// Pods is how many selected pods the run restarts.
	Pods int32 `json:"pods"`
	// Recreated is how many of them the run's requests have recreated so
	// far.
	Recreated int32 `json:"recreated"`
	// UpToDate is how many of them needed nothing: every container the
	// run restarts had been started again since the run began, by
	// something other than the run (a crash, another request).
	// +optional
	UpToDate int32 `json:"upToDate,omitempty"`
	// Baseline is what the run saw of each of its pods when it began: the
	// pod's UID to its containers' instances, "NAME=RESTARTCOUNT/ID"
	// separated by commas, ID the first 12 characters of the container's
	// ID ("-" for a container that had not started). A container counts as
	// started again for the run only when its instance differs from this,
	// never by its start time, whose one-second resolution cannot tell a
	// start just before the run from one just after. Pods that are not
	// listed joined the selection after the run began and are not part of
	// it. Its keys and values are at most MaxBaselineBytes: a run whose
	// baseline would be larger is not started (Halted, reason
	// RunTooLarge).
	// +optional
	Baseline map[string]string `json:"baseline,omitempty"`
	// Skipped is how many of them the run leaves alone: the kubelet would
	// not start their containers again once stopped (restartPolicy Never
	// or OnFailure, and no native sidecar the policy names).
	// +optional
	Skipped int32 `json:"skipped,omitempty"`
	// CompletionTime is when the run completed or halted.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// Message says why a run halted, cut to MaxReasonLength with a note
	// that says so.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
}

// ToRecreate is how many of the run's pods it recreates: those it began
// with, less those it skips and those up to date.
func (r *Run) ToRecreate() int32 {
	return r.Pods - r.Skipped - r.UpToDate
}

// RunState is the state of a run.
// +kubebuilder:validation:Enum=Running;Completed;Halted
type RunState string

// The states of a run.
const (
	RunRunning   RunState = "Running"
	RunCompleted RunState = "Completed"
	RunHalted    RunState = "Halted"
)

// RuleNoData is a rule that lacked a signal for some pods.
type RuleNoData struct {
	// Rule is the rule's name.
	Rule string `json:"rule"`
	// Signal is the input field that was missing.
	Signal string `json:"signal"`
	// Pods is how many selected pods lacked it.
	Pods int32 `json:"pods"`
	// Reason says why the signal is missing, when the manager knows: for
	// memory, what the metrics source answered (for one of the pods).
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Reason string `json:"reason,omitempty"`
}

// MaxRecentDecisions caps status.recentDecisions.
const MaxRecentDecisions = 20

// MaxNoData caps status.noData.
const MaxNoData = 32

// Decision is what the policy decided for one pod and trigger.
type Decision struct {
	// Time of the decision.
	Time metav1.Time `json:"time"`

	// Pod is the name of the pod.
	Pod string `json:"pod"`

	// Containers are the containers concerned.
	// +optional
	// +listType=atomic
	Containers []string `json:"containers,omitempty"`

	// Trigger is what asked for the recreation: schedule, restart (a run
	// requested by restartAt), or rule/NAME.
	Trigger string `json:"trigger"`

	// Outcome is what came of it: Created, DryRun, or the gate that held it
	// back.
	Outcome DecisionOutcome `json:"outcome"`

	// Reason is why the trigger asked for the recreation (the rule's reason
	// or the run), cut to MaxReasonLength with a note that says so.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Reason string `json:"reason,omitempty"`

	// Message explains a held-back or failed decision, cut to
	// MaxReasonLength with a note that says so.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`

	// Request is the name of the ContainerRecreateRequest created.
	// +optional
	Request string `json:"request,omitempty"`
}

// DecisionOutcome is the result of the decision pipeline for one candidate.
// +kubebuilder:validation:Enum=Created;DryRun;Paused;Suspended;OutsideWindow;InFlight;Cooldown;Recurring;RateLimited;Halted;Unavailable;DisruptionBudget;Skipped;UpToDate;Error
type DecisionOutcome string

// The outcomes, in the order of the decision pipeline.
const (
	// OutcomePaused is a candidate held back while Rejuv is paused
	// cluster-wide (PauseConfigMap).
	OutcomePaused        DecisionOutcome = "Paused"
	OutcomeSuspended     DecisionOutcome = "Suspended"
	OutcomeOutsideWindow DecisionOutcome = "OutsideWindow"
	OutcomeInFlight      DecisionOutcome = "InFlight"
	OutcomeCooldown      DecisionOutcome = "Cooldown"
	// OutcomeRecurring is a container a memory rule matches again soon
	// after a memory rule recreated it (limits.memoryRecurrence).
	OutcomeRecurring        DecisionOutcome = "Recurring"
	OutcomeRateLimited      DecisionOutcome = "RateLimited"
	OutcomeHalted           DecisionOutcome = "Halted"
	OutcomeUnavailable      DecisionOutcome = "Unavailable"
	OutcomeDisruptionBudget DecisionOutcome = "DisruptionBudget"
	OutcomeDryRun           DecisionOutcome = "DryRun"
	OutcomeCreated          DecisionOutcome = "Created"
	// OutcomeSkipped is a run not started (a scheduled run missed by more
	// than startingDeadlineSeconds, a run due or requested while another
	// was going), or a pod a run leaves alone.
	OutcomeSkipped DecisionOutcome = "Skipped"
	// OutcomeUpToDate is a pod a run finds needing nothing: every
	// container the run would recreate was started again since the run
	// began, by something other than the run (status.run.upToDate).
	OutcomeUpToDate DecisionOutcome = "UpToDate"
	OutcomeError    DecisionOutcome = "Error"
)

// RecreatePolicy declares which containers of which pods Rejuv recreates in
// place, and when: on a cron schedule, when Rego rules over live signals
// match, or both, within limits that keep the workload available.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=rp,categories=rejuv
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Selected",type=integer,JSONPath=`.status.selectedPods`
// +kubebuilder:printcolumn:name="Active",type=integer,JSONPath=`.status.activeRecreations`
// +kubebuilder:printcolumn:name="Last",type=string,JSONPath=`.status.recentDecisions[0].outcome`,description="Outcome of the latest decision"
// +kubebuilder:printcolumn:name="Last-Pod",type=string,JSONPath=`.status.recentDecisions[0].pod`,priority=1
// +kubebuilder:printcolumn:name="Last-Reason",type=string,JSONPath=`.status.recentDecisions[0].reason`,priority=1
// +kubebuilder:printcolumn:name="Run",type=string,JSONPath=`.status.run.state`,priority=1
// +kubebuilder:printcolumn:name="Next-Run",type=string,JSONPath=`.status.nextScheduleTime`,description="When the schedule fires next (a date column would show the time since, which is negative for a future run)"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type RecreatePolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   RecreatePolicySpec   `json:"spec"`
	Status RecreatePolicyStatus `json:"status,omitempty"`
}

// RecreatePolicyList is a list of RecreatePolicy.
// +kubebuilder:object:root=true
type RecreatePolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RecreatePolicy `json:"items"`
}
