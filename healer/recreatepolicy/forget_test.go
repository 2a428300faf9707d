package recreatepolicy

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/rejuv-dev/rejuv/policy"
)

// TestEngineForgetsDeletedPods: the controller, run by a manager as in the
// cluster, keeps a converted document of each pod its rules evaluate and
// drops it once the pod is deleted, so that a long-running manager's cache
// holds live pods only.
func TestEngineForgetsDeletedPods(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	engine := policy.NewEngine(policy.Options{})
	startManager(t, &Reconciler{Engine: engine}, ns)

	pods := createPods(t, ns, "web", 3, time.Now().Add(-time.Hour))
	createPolicy(t, ns, "watch", rulePolicy("web", annotated))
	cached := func(n int) func(context.Context) (bool, error) {
		return func(context.Context) (bool, error) { return engine.Pods().Len() == n, nil }
	}
	if err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, cached(3)); err != nil {
		t.Fatalf("the engine holds %d pods, want the 3 its rules evaluated", engine.Pods().Len())
	}
	for _, pod := range pods[:2] {
		if err := admin.Delete(context.Background(), pod, client.GracePeriodSeconds(0)); err != nil {
			t.Fatal(err)
		}
	}
	if err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, cached(1)); err != nil {
		t.Errorf("after 2 of 3 pods were deleted the engine holds %d pods, want 1", engine.Pods().Len())
	}
}

// startManager runs r under a manager, as in the cluster, until the test
// ends, watching only the namespaces given, if any (the other tests drive
// Reconcile themselves, on fake clocks). It sets r's clients, and its
// recorder when r has none.
func startManager(t *testing.T, r *Reconciler, namespaces ...string) {
	t.Helper()
	startManagerReading(t, r, nil, namespaces...)
}

// startManagerReading is startManager with r's cached client wrapped by
// wrap, when given.
func startManagerReading(t *testing.T, r *Reconciler, wrap func(client.Client) client.Client, namespaces ...string) {
	t.Helper()
	var cacheOpts cache.Options
	if len(namespaces) > 0 {
		cacheOpts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range namespaces {
			cacheOpts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Cache:      cacheOpts,
		Controller: config.Controller{SkipNameValidation: new(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	r.Client, r.Reader = mgr.GetClient(), mgr.GetAPIReader()
	if wrap != nil {
		r.Client = wrap(r.Client)
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder("test")
	}
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
}
