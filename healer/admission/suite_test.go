package admission

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/rejuv-dev/rejuv/api/apps"
	"github.com/rejuv-dev/rejuv/api/rejuv"
	"github.com/rejuv-dev/rejuv/test/cluster/harness"
)

// The real API server of the integration tests, with Rejuv's CRD installed
// and its webhooks registered by URL, served by this test binary.
var (
	env     *envtest.Environment
	scheme  *runtime.Scheme
	admin   client.Client
	restCfg *rest.Config
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	os.Exit(runWithAPIServer(m))
}

func runWithAPIServer(m *testing.M) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var err error
	if scheme, err = apps.NewScheme(); err != nil {
		return fail(err)
	}
	if err = rejuv.AddToScheme(scheme); err != nil {
		return fail(err)
	}
	root, err := harness.RepoRoot()
	if err != nil {
		return fail(err)
	}
	if env, err = harness.EnvtestWithCRDs(ctx); err != nil {
		return fail(err)
	}
	env.CRDInstallOptions.Scheme = scheme
	env.WebhookInstallOptions.Paths = []string{filepath.Join(root, "config", "webhook")}
	if restCfg, err = env.Start(); err != nil {
		return fail(fmt.Errorf("start envtest: %w", err))
	}
	defer func() { _ = env.Stop() }()
	if admin, err = client.New(restCfg, client.Options{Scheme: scheme}); err != nil {
		return fail(err)
	}
	if err := applyAdmissionPolicies(ctx, admin, root); err != nil {
		return fail(err)
	}

	wo := env.WebhookInstallOptions
	server := webhook.NewServer(webhook.Options{Host: wo.LocalServingHost, Port: wo.LocalServingPort, CertDir: wo.LocalServingCertDir})
	Register(server, scheme, Options{Reader: admin, Client: admin})
	theMeddler.decoder = admission.NewDecoder(scheme)
	server.Register(meddlePath, &admission.Webhook{Handler: theMeddler})
	go func() {
		if err := server.Start(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "webhook server: %v\n", err)
		}
	}()
	if err := waitServing(ctx, server); err != nil {
		return fail(err)
	}
	return m.Run()
}

func waitServing(ctx context.Context, server webhook.Server) error {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if err := server.StartedChecker()(nil); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("webhook server not serving after 20s")
}

func fail(err error) int {
	fmt.Fprintf(os.Stderr, "admission integration tests: %v\n", err)
	return 1
}

// needsAPIServer skips a test in -short mode, where no API server runs.
func needsAPIServer(t *testing.T) {
	t.Helper()
	if env == nil {
		t.Skip("needs the real API server; run without -short (make test)")
	}
}
