package recreatepolicy

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// cacheBehind gives the controller a client whose lists of requests come
// back empty, as from a cache that has seen none, once the returned flag
// is set.
func cacheBehind(t *testing.T, c *testReconciler) *atomic.Bool {
	t.Helper()
	behind := &atomic.Bool{}
	watching, err := client.NewWithWatch(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	c.Client = interceptor.NewClient(watching, interceptor.Funcs{List: func(ctx context.Context, cl client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
		if _, ok := list.(*appsv1beta1.ContainerRecreateRequestList); ok && behind.Load() {
			return nil // the cache has not seen any request yet
		}
		return cl.List(ctx, list, opts...)
	}})
	return behind
}

// TestLimitsCountRequestsTheCacheMisses: the limits count the requests the
// controller created even while its cache does not show them yet: a pass
// that reads a cache behind the previous pass's create admits no more
// than maxPerHour allows.
func TestLimitsCountRequestsTheCacheMisses(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	behind := cacheBehind(t, c)
	pods := createPods(t, ns, "web", 4, c.clock.Now().Add(-time.Hour))
	spec := rulePolicy("web", annotated)
	spec.Limits.MaxPerHour = new(int32(1))
	p := createPolicy(t, ns, "hourly", spec)
	annotate(t, pods[0])
	c.reconcile(t, p)
	if n := len(requestsOf(t, p)); n != 1 {
		t.Fatalf("%d requests after the first pass, want 1", n)
	}
	// The first pod's rule no longer matches; the second's does; the
	// cache is behind the first pass's create.
	unannotate(t, pods[0])
	annotate(t, pods[1])
	behind.Store(true)
	c.clock.Step(time.Second)
	c.reconcile(t, p)
	if n := len(requestsOf(t, p)); n != 1 {
		t.Errorf("%d requests within the hour, limits.maxPerHour is 1", n)
	}
	if !decided(t, p, v1alpha1.OutcomeRateLimited) {
		t.Errorf("no RateLimited decision: %+v", getPolicy(t, p).Status.RecentDecisions)
	}
}

// TestDisruptionBudgetCountsOtherPoliciesRequestsTheCacheMisses: two
// policies select the same pods under a PodDisruptionBudget that allows one
// disruption. The first creates a request; the second's pass, reading a
// cache that does not show that request yet, must still count it and hold
// its own back.
func TestDisruptionBudgetCountsOtherPoliciesRequestsTheCacheMisses(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	behind := cacheBehind(t, c)
	pods, _, spec := budgetOfOne(t, c, ns, 3)
	first, second := createPolicy(t, ns, "first", spec), createPolicy(t, ns, "second", spec)
	annotate(t, pods[0])
	c.reconcile(t, first)
	if n := len(requestsOf(t, first)); n != 1 {
		t.Fatalf("the first policy created %d requests, want 1", n)
	}
	unannotate(t, pods[0])
	annotate(t, pods[1])
	behind.Store(true)
	c.clock.Step(time.Second)
	c.reconcile(t, second)
	if n := len(requestsOf(t, second)); n != 0 {
		t.Errorf("the second policy created %d requests while the first's is in flight and the budget allows one disruption", n)
	}
	if !decided(t, second, v1alpha1.OutcomeDisruptionBudget) {
		t.Errorf("no DisruptionBudget decision: %+v", getPolicy(t, second).Status.RecentDecisions)
	}
}
