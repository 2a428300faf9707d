package crr

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/rejuv-dev/rejuv/api/apps"
	rejuvv1alpha1 "github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/test/cluster/harness"
)

// Tunables of the reconciler under test, short so that tests are quick.
const (
	testNodeLostGrace = 2 * time.Second
	testPickupTimeout = 2 * time.Second
)

// leaderlessLabel marks the pods only the leaderless manager of
// TestAGatedPodIsReadyWithoutALeader sees; the suite's manager does not.
const leaderlessLabel = "rejuv.test/leaderless"

var (
	cfg   *rest.Config
	env   *envtest.Environment
	admin client.Client
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	os.Exit(runWithManager(m))
}

// runWithManager starts a real API server (no webhooks: the tests set the
// labels the webhook would) and the manager with the CRR controllers.
func runWithManager(m *testing.M) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctrl.SetLogger(logr.Discard())
	scheme, err := apps.NewScheme()
	if err == nil {
		// Policies, whose runs keep their requests (keptForRun).
		err = rejuvv1alpha1.AddToScheme(scheme)
	}
	if err != nil {
		return fail(err)
	}
	if env, err = harness.EnvtestWithCRDs(ctx); err != nil {
		return fail(err)
	}
	if cfg, err = env.Start(); err != nil {
		return fail(fmt.Errorf("start envtest: %w", err))
	}
	defer func() { _ = env.Stop() }()
	if admin, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return fail(err)
	}
	notLeaderless, err := labels.Parse("!" + leaderlessLabel)
	if err != nil {
		return fail(err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {Label: notLeaderless}}}})
	if err != nil {
		return fail(err)
	}
	RegisterMetrics(metrics.Registry)
	// As the manager runs it (healer/run.go): a pod the cache misses is
	// confirmed with the API server before its requests are ended.
	r := &Reconciler{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("rejuv-healer"),
		NodeLostGrace: testNodeLostGrace, PickupTimeout: testPickupTimeout}
	if err := r.SetupWithManager(mgr); err != nil {
		return fail(err)
	}
	if err := (&PodReadinessReconciler{Client: mgr.GetClient(), Reader: mgr.GetAPIReader()}).SetupWithManager(mgr); err != nil {
		return fail(err)
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "manager: %v\n", err)
		}
	}()
	return m.Run()
}

func fail(err error) int {
	fmt.Fprintf(os.Stderr, "crr controller integration tests: %v\n", err)
	return 1
}

func needsAPIServer(t *testing.T) {
	t.Helper()
	if env == nil {
		t.Skip("needs the real API server; run without -short (make test)")
	}
}
