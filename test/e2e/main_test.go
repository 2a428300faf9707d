package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/rejuv-dev/rejuv/test/cluster/harness"
	"github.com/rejuv-dev/rejuv/test/images"
)

// The cluster and clients shared by every test of the package.
var (
	cluster *harness.Cluster
	kube    kubernetes.Interface
	restCfg *rest.Config
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	c, release, err := harness.Shared(ctx)
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: start the cluster: %v\n", err)
		return 1
	}
	defer release()
	cluster = c
	if restCfg, err = c.RESTConfig(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	if kube, err = kubernetes.NewForConfig(restCfg); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	if err := c.BuildImage(ctx, images.TestApp); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	code := m.Run()
	stopStack(code != 0)
	return code
}
