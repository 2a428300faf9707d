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
		inFlight[[2]string{crr.Namespace, sourceOf(crr)}]++
		if d := crr.Spec.ActiveDeadlineSeconds; d != nil && !now.Before(crr.CreationTimestamp.Add(time.Duration(*d)*time.Second)) {
			past[crr.Namespace]++
		}
	}
	shownInFlight := map[[2]string]bool{}
	for k, n := range inFlight {
		crrInFlight.WithLabelValues(k[0], k[1]).Set(float64(n))
		shownInFlight[k] = true
	}
	for k := range c.shownInFlight {
		if !shownInFlight[k] {
			crrInFlight.Delete(prometheus.Labels{"namespace": k[0], "source": k[1]})
		}
	}
	shownPast := map[string]bool{}
	for ns, n := range past {
		crrPastDeadline.WithLabelValues(ns).Set(float64(n))
		shownPast[ns] = true
	}
	for ns := range c.shownPast {
		if !shownPast[ns] {
			crrPastDeadline.Delete(prometheus.Labels{"namespace": ns})
		}
	}
	c.shownInFlight, c.shownPast = shownInFlight, shownPast
	return nil
}
