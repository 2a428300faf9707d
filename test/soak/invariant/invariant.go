package invariant

// An Invariant is one of Rejuv's promises that the soak checks from
// outside; its value is how the summary names it.
type Invariant string

// The invariants, in the order the summary lists them.
const (
	// Budget: per policy, the selected pods that Rejuv took while Ready
	// and that are not back (a request of the policy in flight, or its
	// latest request ended and the pod not Ready since) are never more than
	// spec.rollout.maxUnavailable for longer than Slack.Skew.
	Budget Invariant = "maxUnavailable"
	// DisruptionBudget: a policy that respects PodDisruptionBudgets never
	// takes a Ready pod while a budget covering it allows no disruption.
	DisruptionBudget Invariant = "PodDisruptionBudget"
	// OncePerDecision: each request recreates each container it lists at
	// most once; no container restarts without a request; a run asks at
	// most once per pod once a request of it succeeded there; and a rule
	// does not ask again for a container within the policy's cooldown.
	OncePerDecision Invariant = "once per decision"
	// RequestEnds: every request is seen to end within its deadline plus
	// Slack.RequestEnds (and the time faults stopped the API or a node),
	// and is not deleted before it ends unless its pod went too.
	RequestEnds Invariant = "every request ends"
	// StatusMatches: a container a request reports recreated was seen to
	// restart for it.
	StatusMatches Invariant = "status matches"
	// HeldOutOfService: no pod stays out of its Services (KruisePodReady
	// False) without a request in flight for longer than Slack.Held (and
	// the time faults kept the manager from putting it back).
	HeldOutOfService Invariant = "no pod held out of service"
	// ClientRequests: a client request through a Service fails only while
	// a fault that may fail it is under way or just over.
	ClientRequests Invariant = "no failed client request"
	// RunReports: a completed run reports as recreated as many pods as
	// were seen to restart for its requests.
	RunReports Invariant = "run reports match"
	// Components: Rejuv's own pods restart, go or appear only because of a
	// fault that does that.
	Components Invariant = "no unexplained component restart"
	// Panics: no Rejuv container panics.
	Panics Invariant = "no panic"
)

// Invariants are every invariant, in the order the summary lists them.
var Invariants = []Invariant{Budget, DisruptionBudget, OncePerDecision, RequestEnds, StatusMatches,
	HeldOutOfService, ClientRequests, RunReports, Components, Panics}
