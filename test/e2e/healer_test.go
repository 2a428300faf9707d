package e2e

import (
	"context"
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

func waitGone(t *testing.T, ns string) {
	t.Helper()
	_ = wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}
