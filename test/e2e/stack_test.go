package e2e

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// stack is Rejuv running on the cluster as a user would run it: the CRD,
// the manager (webhooks registered by URL) and the node's daemon. Tests that
// recreate containers share it and run in parallel, each on its own pod.
type stack struct {
	client     client.Client
	healer     *process
	daemon     *process
	metricsURL string // the daemon's, plain HTTP on loopback
	logDir     string
}

var (
	sharedOnce  sync.Once
	shared      *stack
	sharedError error
)

// rejuvStack starts the shared stack on first use.
func rejuvStack(t *testing.T) *stack {
	t.Helper()
	sharedOnce.Do(func() { shared, sharedError = startStack(t) })
	if sharedError != nil {
		t.Fatalf("start Rejuv on the cluster: %v", sharedError)
	}
	return shared
}

func startStack(t *testing.T) (*stack, error) {
	s := &stack{client: ctrlClient(t)}
	installCRD(t, s.client)
	var err error
	if s.logDir, err = os.MkdirTemp("", "rejuv-e2e-logs"); err != nil {
		return nil, err
	}
	ports := make([]int, 4)
	for i := range ports {
		if ports[i], err = portFree(); err != nil {
			return nil, err
		}
	}
	webhook, healerProbe, daemonProbe, daemonMetrics := ports[0], ports[1], ports[2], ports[3]
	s.healer, err = launch("healer", []string{
		"--kubeconfig=" + cluster.Kubeconfig(),
		"--namespace=default",
		"--webhook-host=127.0.0.1",
		fmt.Sprintf("--webhook-port=%d", webhook),
		fmt.Sprintf("--webhook-url=https://127.0.0.1:%d", webhook),
		"--cert-dir=" + s.logDir + "/certs",
		"--cert-secret=rejuv-e2e-webhook-certs",
		"--metrics-bind-address=0",
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", healerProbe),
	}, s.logDir, fmt.Sprintf("http://127.0.0.1:%d/readyz", healerProbe))
	if err != nil {
		return nil, err
	}
	s.metricsURL = fmt.Sprintf("http://127.0.0.1:%d/metrics", daemonMetrics)
	s.daemon, err = launch("daemon", []string{
		"--kubeconfig=" + cluster.Kubeconfig(),
		"--node-name=" + cluster.NodeName(),
		"--host-run-dir=" + cluster.Config.Dir,
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", daemonProbe),
		fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", daemonMetrics),
		"--metrics-secure=false",
	}, s.logDir, fmt.Sprintf("http://127.0.0.1:%d/readyz", daemonProbe))
	if err != nil {
		s.healer.stop()
		return nil, err
	}
	return s, nil
}

// stopStack stops the shared stack and removes its registrations; TestMain
// calls it after the tests. When tests failed, the end of each log is shown.
func stopStack(failed bool) {
	if shared == nil {
		return
	}
	for _, o := range []client.Object{
		&admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "rejuv-mutating-webhook-configuration"}},
		&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "rejuv-validating-webhook-configuration"}},
		&apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "containerrecreaterequests.apps.kruise.io"}},
	} {
		_ = shared.client.Delete(context.Background(), o)
	}
	for _, p := range []*process{shared.daemon, shared.healer} {
		p.stop()
		if failed {
			fmt.Fprintf(os.Stderr, "---- %s log (end):\n%s\n", p.name, p.tail(60))
		}
	}
	_ = os.RemoveAll(shared.logDir)
}
