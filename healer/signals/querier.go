package signals

import (
	"context"
	"fmt"
	"math"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// Querier evaluates signals against a Prometheus.
type Querier struct {
	API promv1.API
	// Timeout bounds all the queries of one call together, so that a
	// Prometheus that does not answer holds a policy's pass back once,
	// not once per signal.
	Timeout time.Duration
}

// Query evaluates each signal as an instant query at now and keeps the
// values of the series labelled with the namespace and a pod. A query that
// fails, or answers with something other than an instant vector, has all
// its values missing, with the error as the reason.
func (q *Querier) Query(ctx context.Context, namespace string, signals []v1alpha1.Signal, now time.Time) *Values {
	v := NewValues()
	if q.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, q.Timeout)
		defer cancel()
	}
	for _, s := range signals {
		result, _, _, err := q.API.Query(ctx, s.Query, now)
		if err != nil {
			v.failed[s.Name] = fmt.Sprintf("the query of signal %s failed: %v", s.Name, err)
			observe(err)
			continue
		}
		observe(nil)
		vector, ok := result.(model.Vector)
		if !ok {
			v.failed[s.Name] = fmt.Sprintf("the query of signal %s returned a %s, not an instant vector", s.Name, result.Type())
			continue
		}
		for _, sample := range vector {
			value := float64(sample.Value)
			if string(sample.Metric["namespace"]) != namespace || math.IsNaN(value) || math.IsInf(value, 0) {
				continue
			}
			pod := string(sample.Metric["pod"])
			if pod == "" {
				continue
			}
			v.Set(pod, string(sample.Metric["container"]), s.Name, value)
		}
	}
	return v
}
