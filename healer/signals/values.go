package signals

import (
	"fmt"
	"time"
)

// Values are the values of a policy's signals for the pods of its
// namespace, and why the failed ones failed.
type Values struct {
	// pods maps a pod to its signals' values: series labelled with the
	// pod and no container.
	pods map[string]map[string]float64
	// containers maps a pod and a container to its signals' values.
	containers map[string]map[string]map[string]float64
	// failed maps a signal whose query failed to why.
	failed map[string]string
	// queryTime is what Prometheus took to answer, or to give up on, the
	// queries: the policy's own cost, counted in its evaluation budget.
	queryTime time.Duration
}

// Spent records d as time the signals' source spent answering for the
// policy.
func (v *Values) Spent(d time.Duration) {
	v.queryTime += d
}

// QueryTime is how long Prometheus spent on the queries, those it
// answered or timed out on; time lost to an unreachable Prometheus is not
// the policy's and is not counted.
func (v *Values) QueryTime() time.Duration {
	if v == nil {
		return 0
	}
	return v.queryTime
}

// Pod is the pod's values, nil for none.
func (v *Values) Pod(pod string) map[string]float64 {
	if v == nil {
		return nil
	}
	return v.pods[pod]
}

// Container is the container's values, nil for none.
func (v *Values) Container(pod, container string) map[string]float64 {
	if v == nil {
		return nil
	}
	return v.containers[pod][container]
}

// Missing says why a signal has no value for the pod (of its own, or of
// one of its containers), empty when it has one.
func (v *Values) Missing(pod, signal string) string {
	if v == nil {
		return ""
	}
	if why, failed := v.failed[signal]; failed {
		return why
	}
	if _, ok := v.pods[pod][signal]; ok {
		return ""
	}
	for _, values := range v.containers[pod] {
		if _, ok := values[signal]; ok {
			return ""
		}
	}
	return fmt.Sprintf("the query of signal %s returned no series for the pod", signal)
}

// Unavailable is the values of signals that no Prometheus can answer.
func Unavailable(names []string, why string) *Values {
	v := &Values{failed: map[string]string{}}
	for _, n := range names {
		v.failed[n] = why
	}
	return v
}

// NewValues is an empty set of values.
func NewValues() *Values {
	return &Values{pods: map[string]map[string]float64{}, containers: map[string]map[string]map[string]float64{}, failed: map[string]string{}}
}

// Set records a signal's value for a pod, or for one of its containers
// when container is set.
func (v *Values) Set(pod, container, signal string, value float64) {
	if container == "" {
		if v.pods[pod] == nil {
			v.pods[pod] = map[string]float64{}
		}
		v.pods[pod][signal] = value
		return
	}
	if v.containers[pod] == nil {
		v.containers[pod] = map[string]map[string]float64{}
	}
	if v.containers[pod][container] == nil {
		v.containers[pod][container] = map[string]float64{}
	}
	v.containers[pod][container][signal] = value
}
