package v1beta1

// Labels and annotations of a ContainerRecreateRequest, as OpenKruise names
// them.
const (
	// PodUIDLabel holds the UID of the CRR's pod. Set by the webhook, immutable.
	PodUIDLabel = "crr.apps.kruise.io/pod-uid"
	// PodNameLabel holds the name of the CRR's pod, for selecting a pod's
	// requests by label as OpenKruise's tools do. Set by the webhook when
	// the name is a valid label value (at most 63 characters), immutable.
	PodNameLabel = "crr.apps.kruise.io/pod-name"
	// NodeNameLabel holds the node of the CRR's pod. Set by the webhook, immutable.
	NodeNameLabel = "crr.apps.kruise.io/node-name"
	// ActiveLabel marks a CRR that has not completed; it is removed on
	// completion so that daemons need not watch finished requests.
	ActiveLabel = "crr.apps.kruise.io/active"
	// SyncContainerStatusesAnnotation carries, in v1alpha1, the container
	// statuses that v1beta1 keeps in status.containerStatusSnapshot.
	SyncContainerStatusesAnnotation = "crr.apps.kruise.io/sync-container-statuses"
	// UnreadyAcquiredAnnotation says, in v1alpha1, when the pod was made
	// not ready for the unready grace period: v1beta1's PreRecreateGrace
	// condition.
	UnreadyAcquiredAnnotation = "crr.apps.kruise.io/unready-acquired"
	// ContainersAnnotation lists the request's container names, comma
	// separated, for the CONTAINERS column. Set by the webhook.
	ContainersAnnotation = "rejuv.dev/containers"
	// ResultAnnotation carries, in v1alpha1, status.result.
	ResultAnnotation = "rejuv.dev/result"
	// RequestedAtAnnotation is when the webhook admitted the request, in
	// RFC 3339 with nanoseconds (creationTimestamp has whole seconds): a
	// container instance created after it counts as recreated. Set by the
	// webhook, immutable.
	RequestedAtAnnotation = "rejuv.dev/requested-at"
)

// Labels and annotations of the requests a RecreatePolicy creates.
const (
	// PolicyLabel names the policy: a policy's name is a label value, so
	// at most 63 characters.
	PolicyLabel = "rejuv.dev/policy"
	// TriggerLabel says what triggered the request: schedule, or
	// rule.NAME (a label value cannot hold a slash).
	TriggerLabel = "rejuv.dev/trigger"
	// ReasonAnnotation is why the trigger asked for the recreation.
	ReasonAnnotation = "rejuv.dev/reason"
	// RunAnnotation is the scheduled time of the run that created the
	// request, RFC 3339.
	RunAnnotation = "rejuv.dev/run"
	// DisruptionChargedAnnotation is when the policy charged the
	// PodDisruptionBudgets covering the pod for the request (their
	// status.disruptedPods entry), RFC 3339: the entries it takes back once
	// the request completes.
	DisruptionChargedAnnotation = "rejuv.dev/disruption-charged"

	// PreStopStartedAnnotation carries, in v1alpha1, when the daemon
	// started each container's preStop hook (status.containerRecreateStates
	// [].preStopStartedAt of v1beta1), as JSON: container name to RFC 3339
	// time.
	PreStopStartedAnnotation = "rejuv.dev/prestop-started"
	// SourceLabel names the tool that created a request by hand, e.g.
	// kubectl; on a RecreatePolicy, the tool that wrote it, which the
	// policy's requests then carry too.
	SourceLabel = "rejuv.dev/source"
)

// ManagerOnlyLabels returns the labels of a policy's request that only
// the manager may set or change: the policy reads its own past from them.
// The request-ownership admission policy (config/admission) refuses them
// from anyone else, as it refuses an ownerReference to a RecreatePolicy;
// its list is this one (a test of config/ checks it). The source label
// and the reason annotation are not among them: kubectl rejuv sets them on
// the requests it creates by hand.
func ManagerOnlyLabels() []string {
	return []string{PolicyLabel, TriggerLabel}
}

// ManagerOnlyAnnotations returns the annotations of a policy's request that
// only the manager may set or change, as ManagerOnlyLabels.
func ManagerOnlyAnnotations() []string {
	return []string{RunAnnotation, DisruptionChargedAnnotation}
}

// PodReadyCondition is the pod readiness gate (and condition type) through
// which a request takes its pod out of service before anything is stopped,
// as OpenKruise names it.
const PodReadyCondition = "KruisePodReady"

// ReadinessGateNamespaceLabel opts a namespace in ("enabled": all its new
// pods get the PodReadyCondition readiness gate) or out ("disabled": none
// does, even those a RecreatePolicy selects). In other namespaces a new
// pod gets the gate when a RecreatePolicy of its namespace selects it.
const ReadinessGateNamespaceLabel = "rejuv.dev/readiness-gate"
