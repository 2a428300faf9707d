package signals

import (
	"context"
	"errors"
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
// values of the series labelled with the namespace and a pod. Each query
// is limited to the namespace first (Scope); one that cannot be is not
// sent. Prometheus is given the time left before ctx's deadline (or the
// Timeout) as the query's own timeout. A query that fails, or answers
// with something other than an instant vector, has all its values
// missing, with the error as the reason.
func (q *Querier) Query(ctx context.Context, namespace string, signals []v1alpha1.Signal, now time.Time) *Values {
	v := NewValues()
	if q.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, q.Timeout)
		defer cancel()
	}
	for _, s := range signals {
		scoped, err := Scope(s.Query, namespace)
		if err != nil {
			v.failed[s.Name] = fmt.Sprintf("the query of signal %s is not sent: %v", s.Name, err)
			continue
		}
		var opts []promv1.Option
		if deadline, ok := ctx.Deadline(); ok {
			left := serverTimeout(time.Until(deadline))
			if left <= 0 {
				v.failed[s.Name] = fmt.Sprintf("the query of signal %s is not sent: no time is left of the pass's evaluation budget", s.Name)
				continue
			}
			opts = append(opts, promv1.WithTimeout(left))
		}
		began := time.Now()
		result, _, _, err := q.API.Query(ctx, scoped, now, opts...)
		if prometheusSpent(err) {
			v.Spent(time.Since(began))
		}
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
			if string(sample.Metric[NamespaceLabel]) != namespace || math.IsNaN(value) || math.IsInf(value, 0) {
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

// serverTimeout is d as Prometheus accepts a query's timeout: whole
// seconds, or whole milliseconds below a second (it refuses "9.5s").
func serverTimeout(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Truncate(time.Second)
	}
	return d.Truncate(time.Millisecond)
}

// prometheusSpent says whether a query's time was Prometheus' work on it:
// an answer, a refusal of the query, or its own timeout; not a transport
// failure or a Prometheus unable to serve.
func prometheusSpent(err error) bool {
	if err == nil {
		return true
	}
	var perr *promv1.Error
	if !errors.As(err, &perr) {
		return false
	}
	switch perr.Type {
	case promv1.ErrTimeout, promv1.ErrExec, promv1.ErrBadData, promv1.ErrCanceled:
		return true
	}
	return false
}
