package invariant

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// An Observation is one thing the soak saw, at the time it saw it by the
// soak's own clock (At): never a Kubernetes timestamp, which has whole
// seconds. Observations reach the Checker in the order they were seen.
type Observation interface {
	When() time.Time
}

// PodSeen is a watch event of a pod of the soak's namespaces: its state
// then, or its deletion (Gone).
type PodSeen struct {
	At   time.Time
	Pod  *corev1.Pod
	Gone bool
}

// RequestSeen is a watch event of a ContainerRecreateRequest of the soak's
// namespaces: its state then, or its deletion (Gone).
type RequestSeen struct {
	At      time.Time
	Request *v1beta1.ContainerRecreateRequest
	Gone    bool
}

// PolicySeen is a watch event of a RecreatePolicy of the soak's
// namespaces.
type PolicySeen struct {
	At     time.Time
	Policy *v1alpha1.RecreatePolicy
	Gone   bool
}

// BudgetSeen is a watch event of a PodDisruptionBudget of the soak's
// namespaces.
type BudgetSeen struct {
	At     time.Time
	Budget *policyv1.PodDisruptionBudget
	Gone   bool
}

// ComponentSeen is a watch event of one of Rejuv's own pods (the manager's
// replicas, the daemons).
type ComponentSeen struct {
	At   time.Time
	Pod  *corev1.Pod
	Gone bool
}

// FaultStarted begins a fault the soak injected, FaultEnded ends it: Kind
// is one of the Fault kinds, Target what it hit (a pod's name for a kill,
// a node's name for a fault on a node: its kubelet or containerd, or the
// node lost), ID pairs the two.
type FaultStarted struct {
	At     time.Time
	ID     int
	Kind   Fault
	Target string
}

// FaultEnded says the fault with ID is healed (the component is back, the pod
// replaced, the network restored); what it broke may take a while more to
// recover, which each invariant's slack allows for.
type FaultEnded struct {
	At time.Time
	ID int
}

// ClientFailed is one failed request of a client through a Service
// (namespace/name).
type ClientFailed struct {
	At      time.Time
	Service string
	Err     string
}

// Panic is a panic found in the log of one of Rejuv's containers.
type Panic struct {
	At   time.Time
	Pod  string
	Line string
}

// When is the time the soak saw the pod's event.
func (o PodSeen) When() time.Time { return o.At }

// When is the time the soak saw the request's event.
func (o RequestSeen) When() time.Time { return o.At }

// When is the time the soak saw the policy's event.
func (o PolicySeen) When() time.Time { return o.At }

// When is the time the soak saw the budget's event.
func (o BudgetSeen) When() time.Time { return o.At }

// When is the time the soak saw the component's event.
func (o ComponentSeen) When() time.Time { return o.At }

// When is the time the soak began the fault.
func (o FaultStarted) When() time.Time { return o.At }

// When is the time the soak ended the fault.
func (o FaultEnded) When() time.Time { return o.At }

// When is the time the client's request failed.
func (o ClientFailed) When() time.Time { return o.At }

// When is the time the panic was found.
func (o Panic) When() time.Time { return o.At }
