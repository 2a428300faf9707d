package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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
	// marked Failed. At most a week.
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
	// ContainerRecreateStates are the per-container results.
	// +optional
	// +listType=atomic
	ContainerRecreateStates []ContainerRecreateRequestContainerRecreateState `json:"containerRecreateStates,omitempty"`
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
}

// ContainerRecreateRequestSyncContainerStatus is a container's status as
// the daemon last saw it; in v1alpha1 a JSON list of these is the annotation
// crr.apps.kruise.io/sync-container-statuses.
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
// +kubebuilder:resource:shortName=crr,categories=rejuv
// +kubebuilder:printcolumn:name="PHASE",type="string",JSONPath=".status.phase",description="Phase of the request."
// +kubebuilder:printcolumn:name="POD",type="string",JSONPath=".spec.podName",description="Pod whose containers are recreated."
// +kubebuilder:printcolumn:name="NODE",type="string",JSONPath=".metadata.labels.crr\\.apps\\.kruise\\.io/node-name",description="Node of the pod."
// +kubebuilder:printcolumn:name="CONTAINERS",type="string",JSONPath=".metadata.annotations.rejuv\\.dev/containers",description="Containers to recreate."
// +kubebuilder:printcolumn:name="RESULT",type="string",JSONPath=".metadata.annotations.rejuv\\.dev/result",description="Whether the containers were recreated, once completed."
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
