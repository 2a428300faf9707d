package workingset

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsv1beta1 "k8s.io/metrics/pkg/client/clientset/versioned/typed/metrics/v1beta1"
)

// Reading the working set from the resource metrics API (metrics-server).
// +kubebuilder:rbac:groups=metrics.k8s.io,resources=pods,verbs=list

// MetricsAPI reads the working set from the resource metrics API
// (metrics.k8s.io, served by metrics-server): one list per namespace.
type MetricsAPI struct {
	Client metricsv1beta1.PodMetricsesGetter
}

// Name is the API group.
func (MetricsAPI) Name() string { return "metrics.k8s.io" }

// Sample lists the namespace's pod metrics.
func (m MetricsAPI) Sample(ctx context.Context, namespace string) ([]Sample, error) {
	list, err := m.Client.PodMetricses(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list the pod metrics of namespace %s: %w", namespace, err)
	}
	var out []Sample
	for i := range list.Items {
		pm := &list.Items[i]
		for _, c := range pm.Containers {
			mem, ok := c.Usage["memory"]
			if !ok {
				continue
			}
			out = append(out, Sample{Pod: pm.Name, Container: c.Name, Time: pm.Timestamp.Time, Bytes: mem.Value()})
		}
	}
	return out, nil
}
