package deploy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/rejuv-dev/rejuv/api/apps"
	"github.com/rejuv-dev/rejuv/api/rejuv"
	"github.com/rejuv-dev/rejuv/healer/admission"
	"github.com/rejuv-dev/rejuv/test/cluster/harness"
)

// CRD names: the ContainerRecreateRequest and the RecreatePolicy.
const (
	CRDName       = "containerrecreaterequests.apps.kruise.io"
	PolicyCRDName = "recreatepolicies.rejuv.dev"
)

// crdFiles are the generated CRDs, under config/crd/bases.
var crdFiles = []string{"apps.kruise.io_containerrecreaterequests.yaml", "rejuv.dev_recreatepolicies.yaml"}

// Client returns a client for the cluster that knows Rejuv's types.
func Client(c *harness.Cluster) (client.Client, error) {
	s, err := apps.NewScheme()
	if err == nil {
		err = rejuv.AddToScheme(s)
	}
	if err != nil {
		return nil, err
	}
	cfg, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	// Tests and benchmarks poll; client-go's default 5 requests a second
	// would throttle them, not the cluster.
	cfg.QPS, cfg.Burst = 100, 200
	return client.New(cfg, client.Options{Scheme: s})
}

// InstallCRD applies the generated CRDs and waits until they are
// established.
func InstallCRD(ctx context.Context, c client.Client) error {
	root, err := harness.RepoRoot()
	if err != nil {
		return err
	}
	for _, file := range crdFiles {
		raw, err := os.ReadFile(filepath.Join(root, "config", "crd", "bases", file))
		if err != nil {
			return err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(raw, crd); err != nil {
			return err
		}
		if err := c.Create(ctx, crd); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("install CRD %s: %w", crd.Name, err)
		}
		err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			cur := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(crd), cur); err != nil {
				return false, nil
			}
			for _, cond := range cur.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("CRD %s not established: %w", crd.Name, err)
		}
	}
	return nil
}

// Unregister removes what a manager registered by URL, and the CRDs.
func Unregister(ctx context.Context, c client.Client) {
	unregisterWebhooks(ctx, c)
	for _, name := range []string{CRDName, PolicyCRDName} {
		_ = c.Delete(ctx, &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: name}})
	}
}

// unregisterWebhooks removes the webhook configurations a manager
// registered by URL: with the manager gone they would refuse every request
// they match.
func unregisterWebhooks(ctx context.Context, c client.Client) {
	for _, o := range []client.Object{
		&admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "rejuv-mutating-webhook-configuration"}},
		&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "rejuv-validating-webhook-configuration"}},
		&admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: admission.DaemonScopeName}},
		&admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: admission.DaemonScopeName}},
	} {
		_ = c.Delete(ctx, o)
	}
}

// Stack is Rejuv running on the cluster: the CRD, the manager and the
// node's daemon.
type Stack struct {
	Client client.Client
	Healer *Process
	// healerArgs and healerReady start the manager again.
	healerArgs  []string
	healerReady string
	Daemon      *Process
	// MetricsURL is the daemon's metrics endpoint (plain HTTP, loopback).
	MetricsURL string
	// HealerMetricsURL is the manager's.
	HealerMetricsURL string
	logDir           string
}

// Start installs the CRD and starts the manager and the daemon.
func Start(ctx context.Context, cluster *harness.Cluster) (*Stack, error) {
	c, err := Client(cluster)
	if err != nil {
		return nil, err
	}
	s := &Stack{Client: c}
	if err := InstallCRD(ctx, c); err != nil {
		return nil, err
	}
	if s.logDir, err = os.MkdirTemp("", "rejuv-stack-logs"); err != nil {
		return nil, err
	}
	ports := make([]int, 5)
	for i := range ports {
		if ports[i], err = FreePort(); err != nil {
			return nil, err
		}
	}
	webhook, healerProbe, daemonProbe, daemonMetrics, healerMetrics := ports[0], ports[1], ports[2], ports[3], ports[4]
	s.healerArgs = []string{
		"--kubeconfig=" + cluster.Kubeconfig(),
		"--namespace=default",
		"--webhook-host=127.0.0.1",
		fmt.Sprintf("--webhook-port=%d", webhook),
		fmt.Sprintf("--webhook-url=https://127.0.0.1:%d", webhook),
		"--cert-dir=" + s.logDir + "/certs",
		"--cert-secret=rejuv-test-webhook-certs",
		fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", healerMetrics),
		"--metrics-secure=false",
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", healerProbe),
	}
	s.HealerMetricsURL = loopbackURL(healerMetrics, "/metrics")
	s.healerReady = loopbackURL(healerProbe, "/readyz")
	s.Healer, err = Launch("healer", s.healerArgs, s.logDir, s.healerReady)
	if err != nil {
		return nil, err
	}
	s.MetricsURL = loopbackURL(daemonMetrics, "/metrics")
	s.Daemon, err = Launch("daemon", []string{
		"--kubeconfig=" + cluster.Kubeconfig(),
		"--node-name=" + cluster.NodeName(),
		"--host-run-dir=" + cluster.Config.Dir,
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", daemonProbe),
		fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", daemonMetrics),
		"--metrics-secure=false",
	}, s.logDir, loopbackURL(daemonProbe, "/readyz"))
	if err != nil {
		s.Healer.Stop()
		return nil, err
	}
	return s, nil
}

// Detach stops both processes and removes the webhook registrations but
// keeps the CRDs and every object, for looking around afterwards.
func (s *Stack) Detach(ctx context.Context) {
	unregisterWebhooks(ctx, s.Client)
	for _, p := range []*Process{s.Daemon, s.Healer} {
		p.Stop()
	}
}

// SecondHealer starts another manager beside the first, as a second
// replica would run: its own ports and certificate directory, the same
// webhook URL registered (the first one's) and the same lease.
func (s *Stack) SecondHealer() (*Process, error) {
	ports := make([]int, 2)
	for i := range ports {
		var err error
		if ports[i], err = FreePort(); err != nil {
			return nil, err
		}
	}
	args := make([]string, 0, len(s.healerArgs))
	for _, a := range s.healerArgs {
		switch {
		case strings.HasPrefix(a, "--webhook-port="):
			a = fmt.Sprintf("--webhook-port=%d", ports[0])
		case strings.HasPrefix(a, "--health-probe-bind-address="):
			a = fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", ports[1])
		case strings.HasPrefix(a, "--metrics-bind-address="):
			a = "--metrics-bind-address=0"
		case strings.HasPrefix(a, "--cert-dir="):
			a += "-second"
		}
		args = append(args, a)
	}
	dir, err := os.MkdirTemp(s.logDir, "second")
	if err != nil {
		return nil, err
	}
	return Launch("healer", args, dir, loopbackURL(ports[1], "/readyz"))
}

// RestartHealer starts the manager again after it stopped or was killed;
// its log goes on in the same file.
func (s *Stack) RestartHealer() error {
	p, err := Launch("healer", s.healerArgs, s.logDir, s.healerReady)
	if err != nil {
		return err
	}
	s.Healer = p
	return nil
}

// LogDir is where the processes write their logs.
func (s *Stack) LogDir() string { return s.logDir }

// Stop removes the registrations, stops both processes and returns the end
// of their logs.
func (s *Stack) Stop(ctx context.Context) string {
	Unregister(ctx, s.Client)
	var logs strings.Builder
	for _, p := range []*Process{s.Daemon, s.Healer} {
		p.Stop()
		fmt.Fprintf(&logs, "---- %s log (end):\n%s\n", p.Name, p.Tail(60))
	}
	_ = os.RemoveAll(s.logDir)
	return logs.String()
}
