package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/test/deploy"
)

// ctrlClient is a controller-runtime client that knows Rejuv's types.
func ctrlClient(t *testing.T) client.Client {
	t.Helper()
	c, err := deploy.Client(cluster)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// installCRD applies the generated ContainerRecreateRequest CRD.
func installCRD(t *testing.T, c client.Client) {
	t.Helper()
	if err := deploy.InstallCRD(context.Background(), c); err != nil {
		t.Fatal(err)
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
		deploy.Unregister(context.Background(), c)
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
