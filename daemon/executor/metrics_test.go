package executor

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
)

// TestQueueMetrics: the work queue the executor builds reports its depth,
// each request's wait and the retries.
func TestQueueMetrics(t *testing.T) {
	q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName](),
		workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{Name: "test", MetricsProvider: queueMetrics{}})
	defer q.ShutDown()
	waits := func() uint64 {
		var m dto.Metric
		if err := queueWait.(prometheus.Metric).Write(&m); err != nil {
			t.Fatal(err)
		}
		return m.GetHistogram().GetSampleCount()
	}
	depth, waited, retries := testutil.ToFloat64(queueDepth), waits(), testutil.ToFloat64(queueRetries)
	q.Add(types.NamespacedName{Namespace: "shop", Name: "a"})
	q.Add(types.NamespacedName{Namespace: "shop", Name: "b"})
	if got := testutil.ToFloat64(queueDepth) - depth; got != 2 {
		t.Errorf("depth grew by %v with two requests queued, want 2", got)
	}
	item, _ := q.Get()
	if got := testutil.ToFloat64(queueDepth) - depth; got != 1 {
		t.Errorf("depth grew by %v with one request taken, want 1", got)
	}
	if got := waits() - waited; got != 1 {
		t.Errorf("%d waits observed with one request taken, want 1", got)
	}
	q.AddRateLimited(item)
	q.Done(item)
	if got := testutil.ToFloat64(queueRetries) - retries; got != 1 {
		t.Errorf("retries grew by %v with one request put back, want 1", got)
	}
}
