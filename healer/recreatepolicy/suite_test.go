package recreatepolicy

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/rejuv-dev/rejuv/api/apps"
	"github.com/rejuv-dev/rejuv/api/rejuv"
	"github.com/rejuv-dev/rejuv/test/cluster/harness"
)

// A real API server with Rejuv's CRDs; the tests call Reconcile
// themselves, with a fake clock, and play the kubelet and the daemon by
// writing pod and request statuses.
var (
	env    *envtest.Environment
	scheme *runtime.Scheme
	admin  client.Client
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	os.Exit(runWithAPIServer(m))
}

func runWithAPIServer(m *testing.M) int {
	ctx := context.Background()
	var err error
	if scheme, err = apps.NewScheme(); err == nil {
		err = rejuv.AddToScheme(scheme)
	}
	if err != nil {
		return fail(err)
	}
	if env, err = harness.EnvtestWithCRDs(ctx); err != nil {
		return fail(err)
	}
	cfg, err := env.Start()
	if err != nil {
		return fail(fmt.Errorf("start envtest: %w", err))
	}
	defer func() { _ = env.Stop() }()
	if admin, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return fail(err)
	}
	return m.Run()
}

func fail(err error) int {
	fmt.Fprintf(os.Stderr, "policy controller integration tests: %v\n", err)
	return 1
}

func needsAPIServer(t *testing.T) {
	t.Helper()
	if admin == nil {
		t.Skip("integration test: needs the API server (run without -short)")
	}
}
