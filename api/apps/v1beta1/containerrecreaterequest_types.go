package v1beta1

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MinActiveDeadlineSeconds is the shortest deadline a request may have:
// less cannot cover even a container's stop and the kubelet's restart. The
// CRDs' validation markers repeat the number.
const MinActiveDeadlineSeconds = 3

// MaxActiveDeadlineSeconds is the longest deadline a request may have, a
// week: far longer than any recreation takes (a day's grace included), and
// far from where seconds overflow a time.Duration. The CRDs' validation
// markers repeat the number.
const MaxActiveDeadlineSeconds = 7 * 24 * 60 * 60

// MaxGracePeriodSeconds is the longest terminationGracePeriodSeconds and
// unreadyGracePeriodSeconds a request may have, a day. A pod's own
// terminationGracePeriodSeconds above it is refused as a request's
// default: the request must set a shorter one. The CRDs' validation
// markers repeat the number.
const MaxGracePeriodSeconds = 24 * 60 * 60

// ContainerRecreateRequestSpec says which containers of which pod to
// recreate, and how.
type ContainerRecreateRequestSpec struct {
	// PodName is the name of the pod, in the CRR's namespace, whose
	// containers are recreated. Rejuv's webhook checks it first, with a
	// message that says what is wrong; the schema holds it afterwards,
	// whatever another webhook changes after Rejuv's.
	// +kubebuilder:validation:MinLength=1
	// +required
	PodName string `json:"podName"`
	// Containers are the containers to recreate: regular containers or
	// native sidecars (init containers with restartPolicy Always), each
	// once, at least one and at most 16 (v1beta1.MaxRequestContainers).
	// As for podName, the webhook checks first and the schema holds it
	// afterwards.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +required
	// +listType=map
	// +listMapKey=name
	Containers []ContainerRecreateRequestContainer `json:"containers"`
	// Strategy says how the containers are recreated.
	// +optional
	Strategy *ContainerRecreateRequestStrategy `json:"strategy,omitempty"`
	// ActiveDeadlineSeconds is how long the request may run, counted from
	// its creation; then it completes and every unfinished container is
	// marked Failed. At least MinActiveDeadlineSeconds, at most
	// MaxActiveDeadlineSeconds (a week).
	// +kubebuilder:validation:Minimum=3
	// +kubebuilder:validation:Maximum=604800
	// +optional
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`
	// TTLSecondsAfterFinished is how long a completed request is kept
	// before it is deleted.
	// +kubebuilder:validation:Minimum=0
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
}

// ContainerRecreateRequestContainer is one container to recreate.
type ContainerRecreateRequestContainer struct {
	// Name of the container in the pod.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// PreStop is copied from the container's lifecycle.preStop when the
	// request is created. Set by the system; read-only.
	// +optional
	PreStop *ProbeHandler `json:"preStop,omitempty"`
	// Ports are copied from the container when the request is created, so
	// that a preStop httpGet or tcpSocket with a named port can be resolved.
	// Set by the system; read-only.
	// +optional
	// +listType=atomic
	Ports []corev1.ContainerPort `json:"ports,omitempty"`
	// StatusContext is the container's ID and restart count when the
	// request was created; a different ID or a higher count later means the
	// container has been recreated. Set by the system; read-only.
	// +optional
	StatusContext *ContainerRecreateRequestContainerContext `json:"statusContext,omitempty"`
}

// ProbeHandler is the action run before a container is stopped. One of its
// fields is set.
type ProbeHandler struct {
	// Exec runs a command in the container.
	// +optional
	Exec *corev1.ExecAction `json:"exec,omitempty"`
	// HTTPGet sends an HTTP GET to the pod.
	// +optional
	HTTPGet *corev1.HTTPGetAction `json:"httpGet,omitempty"`
	// TCPSocket opens a TCP connection to the pod.
	// +optional
	TCPSocket *corev1.TCPSocketAction `json:"tcpSocket,omitempty"`
	// Sleep waits before the container is stopped.
	// +optional
	Sleep *corev1.SleepAction `json:"sleep,omitempty"`
}

// ContainerRecreateRequestContainerContext is a container's identity when
// the request was created.
type ContainerRecreateRequestContainerContext struct {
	// ContainerID in the form 'RUNTIME://ID', as in the pod's status.
	ContainerID string `json:"containerID"`
	// RestartCount from the pod's status.
	RestartCount int32 `json:"restartCount"`
}

// ContainerRecreateRequestStrategy says how the containers are recreated.
type ContainerRecreateRequestStrategy struct {
	// FailurePolicy says whether the request ends at the first container
	// that fails (Fail, the default) or goes on with the others (Ignore).
	// +kubebuilder:validation:Enum=Fail;Ignore
	// +optional
	FailurePolicy ContainerRecreateRequestFailurePolicyType `json:"failurePolicy,omitempty"`
	// OrderedRecreate recreates the containers one after the other, each
	// only once the previous one is running again.
	// +optional
	OrderedRecreate bool `json:"orderedRecreate,omitempty"`
	// ForceRecreate stops a container even while it is still starting.
	// +optional
	ForceRecreate bool `json:"forceRecreate,omitempty"`
	// TerminationGracePeriodSeconds is how long a container may take to
	// exit after SIGTERM, at most a day. Defaults to the pod's
	// terminationGracePeriodSeconds; a pod whose own is longer than a day
	// needs a request that sets one.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=86400
	// +optional
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty"`
	// UnreadyGracePeriodSeconds is how long the pod is kept not ready
	// before anything is stopped (needs the KruisePodReady readiness gate),
	// at most a day.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=86400
	// +optional
	UnreadyGracePeriodSeconds *int64 `json:"unreadyGracePeriodSeconds,omitempty"`
	// MinStartedSeconds is how long a new container must run (and be ready,
	// where it has a readiness probe) before it counts as Succeeded.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinStartedSeconds int32 `json:"minStartedSeconds,omitempty"`
}

// ContainerRecreateRequestFailurePolicyType is Fail or Ignore.
type ContainerRecreateRequestFailurePolicyType string

// Failure policies.
const (
	// FailurePolicyFail ends the request at the first failed container.
	FailurePolicyFail ContainerRecreateRequestFailurePolicyType = "Fail"
	// FailurePolicyIgnore goes on with the other containers.
	FailurePolicyIgnore ContainerRecreateRequestFailurePolicyType = "Ignore"
)

// ContainerRecreateRequestStatus is what happened to the request.
type ContainerRecreateRequestStatus struct {
	// Phase of the request: Pending, Recreating or Completed. Completed
	// says the request ended; each container's phase says whether it
	// succeeded.
	// +optional
	Phase ContainerRecreateRequestPhase `json:"phase,omitempty"`
	// CompletionTime is when the request completed.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// Message explains the phase, e.g. why the request ended early.
	// +optional
	Message string `json:"message,omitempty"`
	// Result sums up the containers' phases once the request has
	// completed: Succeeded, Failed or PartiallySucceeded (v1alpha1:
	// annotation rejuv.dev/result).
	// +optional
	Result ContainerRecreateRequestResult `json:"result,omitempty"`
	// ContainerRecreateStates are the per-container results.
	// +optional
	// +listType=atomic
	ContainerRecreateStates []ContainerRecreateRequestContainerRecreateState `json:"containerRecreateStates,omitempty"`
	// ContainerStatusSnapshot are the pod's container statuses seen while
	// the request is recreating (v1alpha1: annotation
	// crr.apps.kruise.io/sync-container-statuses).
	// +optional
	// +listType=atomic
	ContainerStatusSnapshot []ContainerRecreateRequestSyncContainerStatus `json:"containerStatusSnapshot,omitempty"`
	// Conditions of the request; PreRecreateGrace says the pod has been made
	// not ready and since when (v1alpha1: annotation
	// crr.apps.kruise.io/unready-acquired).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ContainerRecreateRequestPhase is the phase of a request or of one
// container.
type ContainerRecreateRequestPhase string

// Phases. A request is Pending, Recreating or Completed; a container is
// Pending, Recreating, Succeeded or Failed.
const (
	PhasePending    ContainerRecreateRequestPhase = "Pending"
	PhaseRecreating ContainerRecreateRequestPhase = "Recreating"
	PhaseSucceeded  ContainerRecreateRequestPhase = "Succeeded"
	PhaseFailed     ContainerRecreateRequestPhase = "Failed"
	PhaseCompleted  ContainerRecreateRequestPhase = "Completed"
)

// ContainerRecreateRequestResult sums up a completed request.
// +kubebuilder:validation:Enum=Succeeded;Failed;PartiallySucceeded
type ContainerRecreateRequestResult string

// Results of a completed request.
const (
	ResultSucceeded          ContainerRecreateRequestResult = "Succeeded"
	ResultFailed             ContainerRecreateRequestResult = "Failed"
	ResultPartiallySucceeded ContainerRecreateRequestResult = "PartiallySucceeded"
)

// Deadline is when the request's activeDeadlineSeconds passes, counted
// from its creation; false when it has none.
func (r *ContainerRecreateRequest) Deadline() (time.Time, bool) {
	if r.Spec.ActiveDeadlineSeconds == nil {
		return time.Time{}, false
	}
	return r.CreationTimestamp.Add(SecondsDuration(*r.Spec.ActiveDeadlineSeconds)), true
}

// ConditionPreRecreateGrace is True once the pod has been made not ready
// for the unready grace period; its lastTransitionTime says when. It is
// False (reason NoReadinessGate) when the pod has no readiness gate, so
// the grace cannot be kept.
const ConditionPreRecreateGrace = "PreRecreateGrace"

// BackOffMessage begins a container's state message while the kubelet
// holds the stopped container's restart in its crash-loop back-off (the
// container was restarted less than 10 minutes before); the kubelet's own
// message follows.
const BackOffMessage = "stopped; the kubelet holds the restart in its back-off: "

// ContainerRecreateRequestContainerRecreateState is one container's result.
type ContainerRecreateRequestContainerRecreateState struct {
	// Name of the container.
	Name string `json:"name"`
	// Phase of the container's recreation.
	Phase ContainerRecreateRequestPhase `json:"phase"`
	// Message explains the phase, e.g. why it failed.
	// +optional
	Message string `json:"message,omitempty"`
	// IsKilled says the daemon has stopped the container for this request.
	// +optional
	IsKilled bool `json:"isKilled,omitempty"`
	// PreStopStartedAt is when the daemon started the container's preStop
	// hook, recorded before the hook runs: a daemon restarted while the hook
	// ran stops the container without running the hook again, with what is
	// left of the grace period. v1alpha1 carries it in the annotation
	// rejuv.dev/prestop-started.
	// +optional
	PreStopStartedAt *metav1.Time `json:"preStopStartedAt,omitempty"`
}

// ContainerRecreateRequestSyncContainerStatus is a container's status as
// the daemon last saw it.
type ContainerRecreateRequestSyncContainerStatus struct {
	// Name of the container.
	Name string `json:"name"`
	// Ready says whether the container passes its readiness probe.
	Ready bool `json:"ready"`
	// RestartCount from the pod's status.
	RestartCount int32 `json:"restartCount"`
	// ContainerID in the form 'RUNTIME://ID'.
	// +optional
	ContainerID string `json:"containerID,omitempty"`
}

// ContainerRecreateRequest asks for containers of a pod to be recreated in
// place: stopped (after their preStop) and started again by the kubelet,
// while the pod, its IP, its volumes and its other containers stay.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:shortName=crr,categories=rejuv
// +kubebuilder:printcolumn:name="PHASE",type="string",JSONPath=".status.phase",description="Phase of the request."
// +kubebuilder:printcolumn:name="POD",type="string",JSONPath=".spec.podName",description="Pod whose containers are recreated."
// +kubebuilder:printcolumn:name="NODE",type="string",JSONPath=".metadata.labels.crr\\.apps\\.kruise\\.io/node-name",description="Node of the pod."
// +kubebuilder:printcolumn:name="CONTAINERS",type="string",JSONPath=".metadata.annotations.rejuv\\.dev/containers",description="Containers to recreate."
// +kubebuilder:printcolumn:name="RESULT",type="string",JSONPath=".status.result",description="Whether the containers were recreated, once completed."
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
type ContainerRecreateRequest struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ContainerRecreateRequestSpec   `json:"spec,omitempty"`
	Status ContainerRecreateRequestStatus `json:"status,omitempty"`
}

// ContainerRecreateRequestList is a list of ContainerRecreateRequests.
// +kubebuilder:object:root=true
type ContainerRecreateRequestList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ContainerRecreateRequest `json:"items"`
}

// Hub marks v1beta1 as the version other versions convert through.
func (*ContainerRecreateRequest) Hub() {}
