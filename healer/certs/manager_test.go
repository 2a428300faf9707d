package certs

import (
	"context"
	"crypto/x509"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/rejuv-dev/rejuv/api/apps"
	"github.com/rejuv-dev/rejuv/config"
	"github.com/rejuv-dev/rejuv/test/cluster/harness"
)

const crdName = "containerrecreaterequests.apps.kruise.io"

var (
	env   *envtest.Environment
	admin client.Client
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx := context.Background()
	s, err := apps.NewScheme()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if env, err = harness.EnvtestWithCRDs(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	if admin, err = client.New(cfg, client.Options{Scheme: s}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

func needsAPIServer(t *testing.T) {
	t.Helper()
	if env == nil {
		t.Skip("needs the real API server; run without -short (make test)")
	}
}

func newManager(t *testing.T, targets Targets, clk *clocktesting.FakePassiveClock, hosts ...string) *Manager {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "certs-"}}
	if err := admin.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return &Manager{Client: admin, Secret: types.NamespacedName{Namespace: ns.Name, Name: "rejuv-webhook-certs"},
		Hosts: hosts, CertDir: t.TempDir(), Targets: targets, Lifetimes: testLife, Clock: clk}
}

// TestURLRegistrationForRunsOutsideTheCluster registers the webhooks and
// the conversion by URL, then renews and re-registers nothing twice.
func TestURLRegistrationForRunsOutsideTheCluster(t *testing.T) {
	needsAPIServer(t)
	ctx := context.Background()
	mutating, validating, err := config.WebhookConfigurations()
	if err != nil {
		t.Fatal(err)
	}
	mutating.Name, validating.Name = "rejuv-mutating-webhook-configuration", "rejuv-validating-webhook-configuration"
	clk := clocktesting.NewFakePassiveClock(time.Now())
	m := newManager(t, Targets{Mutating: mutating, Validating: validating, CRDs: []string{crdName}, URL: "https://127.0.0.1:19443", ConvertPath: "/convert"}, clk, "127.0.0.1")
	if err := m.Ensure(ctx); err != nil {
		t.Fatalf("Ensure: %v", err)
	}

	secret := &corev1.Secret{}
	if err := admin.Get(ctx, m.Secret, secret); err != nil {
		t.Fatalf("Secret not stored: %v", err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(secret.Data[keyCABundle])
	servingFile := filepath.Join(m.CertDir, "tls.crt")
	onDisk, err := os.ReadFile(servingFile)
	if err != nil {
		t.Fatalf("serving certificate not written: %v", err)
	}
	cert, err := parseCert(onDisk)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: "127.0.0.1"}); err != nil {
		t.Errorf("served certificate not trusted by the stored CA bundle: %v", err)
	}

	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := admin.Get(ctx, types.NamespacedName{Name: "rejuv-mutating-webhook-configuration"}, mwc); err != nil {
		t.Fatalf("mutating webhook configuration not created: %v", err)
	}
	for _, w := range mwc.Webhooks {
		if w.ClientConfig.URL == nil || w.ClientConfig.Service != nil || string(w.ClientConfig.CABundle) != string(secret.Data[keyCABundle]) {
			t.Errorf("webhook %s clientConfig = %+v, want a URL and the CA bundle", w.Name, w.ClientConfig)
		}
	}
	if got := *mwc.Webhooks[0].ClientConfig.URL; got != "https://127.0.0.1:19443/mutate-apps-kruise-io-v1beta1-containerrecreaterequest" {
		t.Errorf("URL = %s", got)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := admin.Get(ctx, types.NamespacedName{Name: crdName}, crd); err != nil {
		t.Fatal(err)
	}
	if c := crd.Spec.Conversion; c.Strategy != apiextensionsv1.WebhookConverter || *c.Webhook.ClientConfig.URL != "https://127.0.0.1:19443/convert" {
		t.Errorf("CRD conversion = %+v", c)
	}

	// Nothing is due: nothing is written.
	rv := secret.ResourceVersion
	if err := m.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if err := admin.Get(ctx, m.Secret, secret); err != nil || secret.ResourceVersion != rv {
		t.Errorf("Secret rewritten without a reason (%v)", err)
	}

	// 31 days on the serving certificate is due: a new one, on disk too.
	clk.SetTime(clk.Now().Add(31 * 24 * time.Hour))
	if err := m.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	renewed, err := os.ReadFile(servingFile)
	if err != nil || string(renewed) == string(onDisk) {
		t.Errorf("serving certificate on disk not renewed (%v)", err)
	}
}

// TestServiceModeNeedsInstalledConfigurations: in the cluster the
// configurations come from config/default; one still missing after the
// install wait is a clear error.
func TestServiceModeNeedsInstalledConfigurations(t *testing.T) {
	needsAPIServer(t)
	mutating, _, err := config.WebhookConfigurations()
	if err != nil {
		t.Fatal(err)
	}
	mutating.Name = "not-installed"
	m := newManager(t, Targets{Mutating: mutating, InstallWait: 2 * time.Second}, clocktesting.NewFakePassiveClock(time.Now()), "rejuv-webhook.rejuv-system.svc")
	start := time.Now()
	err = m.Ensure(context.Background())
	want := "set CA bundle of MutatingWebhookConfiguration not-installed: it is not installed (install Rejuv's manifests)"
	if err == nil || err.Error() != want {
		t.Fatalf("Ensure() = %v, want %q", err, want)
	}
	if took := time.Since(start); took < 2*time.Second || took > 20*time.Second {
		t.Errorf("Ensure gave up after %s; the install wait is 2s", took)
	}
}

// TestAConfigurationInstalledAfterTheManagerStartsGetsTheBundle: the
// install applies the webhook configurations after the manager's
// Deployment, so a replica may start before they exist; it waits for them
// and sets their CA bundle.
func TestAConfigurationInstalledAfterTheManagerStartsGetsTheBundle(t *testing.T) {
	needsAPIServer(t)
	ctx := context.Background()
	mutating, _, err := config.WebhookConfigurations()
	if err != nil {
		t.Fatal(err)
	}
	mutating.Name = "installed-late"
	m := newManager(t, Targets{Mutating: mutating, InstallWait: time.Minute}, clocktesting.NewFakePassiveClock(time.Now()), "rejuv-webhook.rejuv-system.svc")
	ensured := make(chan error, 1)
	go func() { ensured <- m.Ensure(ctx) }()
	time.Sleep(2 * time.Second)
	select {
	case err := <-ensured:
		t.Fatalf("Ensure returned (%v) before the configuration was installed", err)
	default:
	}
	installed := mutating.DeepCopy()
	if err := admin.Create(ctx, installed); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Delete(context.Background(), installed) })
	select {
	case err := <-ensured:
		if err != nil {
			t.Fatalf("Ensure: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Ensure did not return within 30s of the configuration's install")
	}
	secret := &corev1.Secret{}
	if err := admin.Get(ctx, m.Secret, secret); err != nil {
		t.Fatal(err)
	}
	got := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := admin.Get(ctx, types.NamespacedName{Name: "installed-late"}, got); err != nil {
		t.Fatal(err)
	}
	for _, w := range got.Webhooks {
		if string(w.ClientConfig.CABundle) != string(secret.Data[keyCABundle]) {
			t.Errorf("webhook %s has no CA bundle of the stored Secret's", w.Name)
		}
	}
}
