package recreatepolicy

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/signals"
	"github.com/rejuv-dev/rejuv/policy"
)

// firstRequest creates a policy over pod that acts at once, and returns how
// long it took for its request to exist.
func firstRequest(t *testing.T, ns, name string) time.Duration {
	t.Helper()
	pods := createPods(t, ns, name, 1, time.Now().Add(-time.Hour))
	annotate(t, pods[0])
	start := time.Now()
	p := createPolicy(t, ns, name, rulePolicy(name, annotated))
	for deadline := start.Add(time.Minute); len(requestsOf(t, p)) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("policy %s/%s created no request within a minute", ns, name)
		}
	}
	return time.Since(start)
}

// slowPrometheus answers every query of the policies of namespace after
// a second, as an overloaded Prometheus would: a pass waits for it
// holding its worker, but spends no processor time, so that the other
// namespaces' passes are slowed by nothing but waiting for a worker.
type slowPrometheus struct{ namespace string }

func (s slowPrometheus) Query(ctx context.Context, namespace string, q []v1alpha1.Signal, _ time.Time) *signals.Values {
	if namespace != s.namespace {
		return signals.NewValues()
	}
	select {
	case <-time.After(time.Second):
	case <-ctx.Done():
	}
	return signals.Unavailable([]string{q[0].Name}, "Prometheus answered after a second")
}

// TestBusyNamespaceDoesNotHoldOthersBack: one namespace's many policies,
// each pass of which waits a second for Prometheus, do not take every
// worker: another namespace's policy acts about as soon as it does with
// no load, while the busy namespace's passes beyond its share wait,
// counted. (Were the passes spending the second on their rules, on a
// loaded machine they would slow the other namespace's pass by taking
// the processors, which is not what is tested here.)
func TestBusyNamespaceDoesNotHoldOthersBack(t *testing.T) {
	needsAPIServer(t)
	busy := newNamespace(t)
	r := &Reconciler{Recorder: events.NewFakeRecorder(10000), Workers: 4,
		Engine: policy.NewEngine(policy.Options{Deadline: time.Second}), Signals: slowPrometheus{namespace: busy}}
	startManager(t, r)

	firstRequest(t, newNamespace(t), "warm") // the manager's caches are filled
	normal := firstRequest(t, newNamespace(t), "idle")

	createPods(t, busy, "slow", 1, time.Now().Add(-time.Hour))
	const slowPolicies = 16
	spec := rulePolicy("slow", annotated)
	spec.Signals = []v1alpha1.Signal{{Name: "queue", Query: "queue_length"}}
	for i := range slowPolicies {
		createPolicy(t, busy, fmt.Sprintf("slow-%d", i), spec)
	}
	time.Sleep(500 * time.Millisecond) // the slow passes are under way
	loaded := firstRequest(t, newNamespace(t), "other")
	t.Logf("another namespace's policy acted %s after it was created with no load, %s beside %d policies of a busy namespace, each pass of which waits a second for Prometheus",
		normal.Round(time.Millisecond), loaded.Round(time.Millisecond), slowPolicies)
	if loaded > normal+time.Second {
		t.Errorf("beside the busy namespace, the other namespace's policy acted %s after it was created, want within a second of its %s with no load",
			loaded.Round(time.Millisecond), normal.Round(time.Millisecond))
	}
	deferred := 0.0
	for i := range slowPolicies {
		deferred += testutil.ToFloat64(passesDeferred.WithLabelValues(fmt.Sprintf("slow-%d", i), busy))
	}
	if deferred == 0 {
		t.Error("no pass of the busy namespace was deferred (rejuv_policy_passes_deferred_total)")
	}
}

// countBudgetCalls gives the controller clients that count its reads from
// the API server and its writes of PodDisruptionBudgets.
func countBudgetCalls(t *testing.T, c *testReconciler) (reads, writes *atomic.Int32) {
	t.Helper()
	reads, writes = &atomic.Int32{}, &atomic.Int32{}
	direct, err := client.NewWithWatch(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	c.Reader = interceptor.NewClient(direct, interceptor.Funcs{
		Get: func(ctx context.Context, cl client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*policyv1.PodDisruptionBudget); ok {
				reads.Add(1)
			}
			return cl.Get(ctx, key, obj, opts...)
		},
	})
	c.Client = interceptor.NewClient(direct, interceptor.Funcs{
		SubResourceUpdate: func(ctx context.Context, cl client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if _, ok := obj.(*policyv1.PodDisruptionBudget); ok {
				writes.Add(1)
			}
			return cl.SubResource(sub).Update(ctx, obj, opts...)
		},
	})
	return reads, writes
}

// TestBudgetChargedOncePerPass: a pass that admits many pods under one
// PodDisruptionBudget charges them all in one write of its status, read
// with the namespace's budgets, rather than a read and a write per pod
// while the namespace's other policies wait; and takes the entries back
// in one write once the requests complete.
func TestBudgetChargedOncePerPass(t *testing.T) {
	needsAPIServer(t)
	ctx := context.Background()
	ns := newNamespace(t)
	c := newController(t, 0)
	const n = 6
	pods := createPods(t, ns, "web", n, c.clock.Now().Add(-time.Hour))
	pdb := createPDB(t, ns, "web", policyv1.PodDisruptionBudgetSpec{MaxUnavailable: new(intstr.FromInt32(n))})
	setPDBStatus(t, pdb, n, 0, n)
	spec := rulePolicy("web", annotated)
	spec.Limits.MaxMatchingPercent = new(int32(100))
	p := createPolicy(t, ns, "p", spec)
	for _, pod := range pods {
		annotate(t, pod)
	}
	reads, writes := countBudgetCalls(t, c)

	c.reconcile(t, p)
	crrs := requestsOf(t, p)
	live := &policyv1.PodDisruptionBudget{}
	if err := admin.Get(ctx, client.ObjectKeyFromObject(pdb), live); err != nil {
		t.Fatal(err)
	}
	t.Logf("a pass admitting %d pods under one budget: %d reads of the budget, %d writes", len(crrs), reads.Load(), writes.Load())
	if len(crrs) != n || len(live.Status.DisruptedPods) != n || live.Status.DisruptionsAllowed != 0 {
		t.Fatalf("premise: %d requests, budget with %d pods charged and %d disruptions allowed; want %d, %d and 0",
			len(crrs), len(live.Status.DisruptedPods), live.Status.DisruptionsAllowed, n, n)
	}
	if reads.Load() != 0 || writes.Load() != 1 {
		t.Errorf("charging %d pods took %d reads of the budget and %d writes, want none and one", n, reads.Load(), writes.Load())
	}

	reads.Store(0)
	writes.Store(0)
	for i := range crrs {
		complete(t, c, &crrs[i], true)
	}
	c.clock.Step(time.Second)
	c.reconcile(t, p)
	if err := admin.Get(ctx, client.ObjectKeyFromObject(pdb), live); err != nil {
		t.Fatal(err)
	}
	if len(live.Status.DisruptedPods) != 0 || writes.Load() != 1 {
		t.Errorf("after the requests completed: %d pods still charged, %d writes; want none, in one write", len(live.Status.DisruptedPods), writes.Load())
	}
}
