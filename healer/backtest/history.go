package backtest

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/rejuv-dev/rejuv/healer/workingset"
)

// Pod is one pod as history recorded it over the period.
type Pod struct {
	// Pod is the pod's object: its name, UID, labels and spec (its
	// containers and their limits). Its status is rebuilt at each pass
	// from Containers.
	Pod *corev1.Pod
	// From and To bound when the pod ran. A zero To leaves the end to the
	// samples: the pod is gone once its containers have had no sample for
	// GoneAfter (or never had one since From).
	From, To   time.Time
	Containers []Container
}

// Container is one container of a pod: its instances, oldest first.
type Container struct {
	Name      string
	Instances []Instance
}

// Instance is one run of a container, from its start to its end.
type Instance struct {
	// ID is the runtime's ID of the instance, without the runtime://
	// prefix: the samples of the working set name it.
	ID      string
	Started time.Time
	// Ended is when it ended, zero while it runs; Reason is why, as the
	// kubelet says it (OOMKilled for the kernel's OOM kill), with its
	// exit code.
	Ended    time.Time
	Reason   string
	ExitCode int32
}

// GoneAfter is how long a pod without an end in history may go without a
// sample before it counts as gone: Prometheus' lookback, after which its
// series are stale.
const GoneAfter = 5 * time.Minute

// OOMKilled is the kubelet's reason for an instance the kernel killed for
// running out of memory.
const OOMKilled = "OOMKilled"

// Source is the history a backtest reads.
type Source interface {
	// Pods are the pods of namespace that selector chooses and that ran
	// at some time in [from, to), with their containers' instances, and
	// what history lacks: the pods of that time and namespace whose labels
	// it does not hold (they cannot be matched, so they are not
	// replayed), the OOM kills.
	Pods(ctx context.Context, namespace string, selector labels.Selector, from, to time.Time) ([]Pod, Coverage, error)
	// WorkingSet is the working set of the containers of the named pods
	// of namespace sampled in (from, to], each container's in time
	// order, every sample naming its instance.
	WorkingSet(ctx context.Context, namespace string, pods []string, from, to time.Time) (map[ContainerRef][]workingset.Sample, error)
}

// ReadinessSource is a Source that also holds the containers' readiness:
// rules that read it (stuck-readiness) are then replayed.
type ReadinessSource interface {
	Source
	// Readiness is whether the containers of the named pods of namespace
	// were ready, as recorded in (from, to], each container's in time
	// order.
	Readiness(ctx context.Context, namespace string, pods []string, from, to time.Time) (map[ContainerRef][]ReadySample, error)
}

// ReadySample is a container's readiness at a time.
type ReadySample struct {
	Time  time.Time
	Ready bool
}

// Coverage says what history could not give a backtest.
type Coverage struct {
	// Readiness is set when history holds the containers' readiness (a
	// ReadinessSource that found it for the period).
	Readiness bool `json:"readiness"`
	// Unmatched counts the pods history holds whose labels it does not
	// hold (they are not replayed), and UnmatchedWhy says why.
	Unmatched    int    `json:"unmatched"`
	UnmatchedWhy string `json:"unmatchedWhy,omitempty"`
	// KillsUnknown says why the OOM kills of the period are not known,
	// "" when they are.
	KillsUnknown string `json:"killsUnknown,omitempty"`
}

// ContainerRef names a container of a pod of the policy's namespace.
type ContainerRef struct {
	Pod, Container string
}
