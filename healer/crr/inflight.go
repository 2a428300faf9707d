package crr

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// countInterval is how often the requests in flight are counted.
const countInterval = 15 * time.Second

// InFlightCounter counts the requests in flight, and those past their
// deadline, from the manager's cache at every interval: a count of what
// is there, which a missed event cannot skew. It runs in the leader,
// whose cache holds the requests already.
type InFlightCounter struct {
	Reader client.Reader
	Clock  clock.PassiveClock
	// Interval between counts (default 15s).
	Interval time.Duration

	// shown are the series the last count set, to delete those the next
	// one no longer has.
	shownInFlight map[[2]string]bool
	shownPast     map[string]bool
}

// NeedLeaderElection runs the counter in the leader only.
func (c *InFlightCounter) NeedLeaderElection() bool { return true }

// Start counts at every interval until ctx ends.
func (c *InFlightCounter) Start(ctx context.Context) error {
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	interval := c.Interval
	if interval <= 0 {
		interval = countInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := c.Count(ctx); err != nil {
			ctrl.LoggerFrom(ctx).Info("could not count the requests in flight", "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Count sets the gauges once.
func (c *InFlightCounter) Count(ctx context.Context) error {
	var list v1beta1.ContainerRecreateRequestList
	if err := c.Reader.List(ctx, &list); err != nil {
		return fmt.Errorf("list ContainerRecreateRequests: %w", err)
	}
	now := c.Clock.Now()
	inFlight := map[[2]string]int{}
	past := map[string]int{}
	for i := range list.Items {
		crr := &list.Items[i]
		if crr.Status.Phase == v1beta1.PhaseCompleted {
			continue
		}
		inFlight[[2]string{crr.Namespace, v1beta1.SourceOf(crr)}]++
		if deadline, ok := crr.Deadline(); ok && !now.Before(deadline) {
			past[crr.Namespace]++
		}
	}
	c.shownInFlight = setCounts(crrInFlight, inFlight, c.shownInFlight, func(k [2]string) []string { return k[:] })
	c.shownPast = setCounts(crrPastDeadline, past, c.shownPast, func(ns string) []string { return []string{ns} })
	return nil
}

// setCounts sets a series of vec for each count, labelled by values of
// its key, and deletes the series of shown (the last counts) that counts
// no longer has, rather than clearing vec first: a scrape in between
// would see no series at all. It returns the keys it set.
func setCounts[K comparable](vec *prometheus.GaugeVec, counts map[K]int, shown map[K]bool, values func(K) []string) map[K]bool {
	set := make(map[K]bool, len(counts))
	for k, n := range counts {
		vec.WithLabelValues(values(k)...).Set(float64(n))
		set[k] = true
	}
	for k := range shown {
		if !set[k] {
			vec.DeleteLabelValues(values(k)...)
		}
	}
	return set
}
