package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/rejuv-dev/rejuv/api/apps"
	"github.com/rejuv-dev/rejuv/test/cluster/harness"
)

// ctrlClient is a controller-runtime client that knows Rejuv's types.
func ctrlClient(t *testing.T) client.Client {
	t.Helper()
	s, err := apps.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(restCfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// installCRD applies the generated ContainerRecreateRequest CRD.
func installCRD(t *testing.T, c client.Client) {
	t.Helper()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "config", "crd", "bases", "apps.kruise.io_containerrecreaterequests.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(raw, crd); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Create(ctx, crd); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("install CRD: %v", err)
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
		t.Fatalf("CRD not established: %v", err)
	}
}

// startHealer runs rejuv-healer as a process outside the cluster, with its
// webhooks registered by URL, until the test ends; the cleanup removes the
// registrations before stopping it.
func startHealer(t *testing.T, c client.Client, extra ...string) {
	t.Helper()
	ctx := context.Background()
	ns := "rejuv-healer-e2e"
	if err := kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err == nil {
		waitGone(t, ns)
	}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, namespaceObj(ns), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	webhookPort, probePort := freePort(t), freePort(t)
	args := append([]string{
		"--kubeconfig=" + cluster.Kubeconfig(),
		"--namespace=" + ns,
		"--webhook-host=127.0.0.1",
		fmt.Sprintf("--webhook-port=%d", webhookPort),
		fmt.Sprintf("--webhook-url=https://127.0.0.1:%d", webhookPort),
		"--cert-dir=" + t.TempDir(),
		"--metrics-bind-address=0",
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", probePort),
	}, extra...)
	stop, _ := startBinary(t, "healer", args, fmt.Sprintf("http://127.0.0.1:%d/readyz", probePort))
	t.Cleanup(func() {
		for _, o := range []client.Object{
			&admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "rejuv-mutating-webhook-configuration"}},
			&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "rejuv-validating-webhook-configuration"}},
			&apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "containerrecreaterequests.apps.kruise.io"}},
		} {
			_ = c.Delete(context.Background(), o)
		}
		stop()
	})
}

func waitGone(t *testing.T, ns string) {
	t.Helper()
	_ = wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}
