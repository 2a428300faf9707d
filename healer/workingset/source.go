package workingset

import (
	"context"
	"time"
)

// Source reads the working set of a namespace's containers.
type Source interface {
	// Name says where the samples come from, for reasons and metrics:
	// "metrics.k8s.io" or "prometheus".
	Name() string
	// Sample returns the newest working set of each container of the
	// namespace's running pods that the source knows.
	Sample(ctx context.Context, namespace string) ([]Sample, error)
}

// Historian is a Source that also keeps history, so that a window can be
// filled at once rather than one interval at a time.
type Historian interface {
	Source
	// History returns the working set of the namespace's containers at
	// every step since since.
	History(ctx context.Context, namespace string, since time.Time, step time.Duration) ([]Sample, error)
}

// Sample is one container's working set at a time.
type Sample struct {
	Pod, Container string
	// ContainerID, when the source knows it, is the runtime's ID of the
	// container instance (without the runtime:// prefix): a sample of
	// another instance is not counted.
	ContainerID string
	Time        time.Time
	Bytes       int64
}
