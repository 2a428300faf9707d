package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/rejuv-dev/rejuv/test/cluster/harness"
	"github.com/rejuv-dev/rejuv/test/deploy"
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
	// The tests' controller-runtime clients log nothing worth reading;
	// without a logger, controller-runtime prints a warning instead.
	ctrllog.SetLogger(logr.Discard())
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
	if _, err := c.BuildImage(ctx, images.TestApp); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	start := time.Now()
	if stack, err = deploy.Install(ctx, c, deploy.Options{}); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: install Rejuv: %v\n", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "e2e: Rejuv installed in %s\n", time.Since(start).Round(100*time.Millisecond))
	health = deploy.NewHealth(stack)
	code := m.Run()
	if !healthy() {
		code = 1
	}
	if code != 0 {
		fmt.Fprint(os.Stderr, stack.Describe(ctx))
	}
	start = time.Now()
	if err := stack.Uninstall(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "e2e: Rejuv uninstalled in %s\n", time.Since(start).Round(100*time.Millisecond))
	return code
}

// healthy fails the run when one of Rejuv's components logged a panic,
// recovered or not, or restarted without a test asking for it (see
// deploy.Health): faults that every test's own checks may have missed.
func healthy() bool {
	// Its own time: the run may have used up the suite's.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	findings, err := health.Check(ctx)
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: FAIL: look for panics and restarts of Rejuv's components: %v\n", err)
		return false
	}
	if len(findings) == 0 {
		return true
	}
	fmt.Fprintf(os.Stderr, "e2e: FAIL: %d fault(s) of Rejuv's components during the run:\n", len(findings))
	for _, f := range findings {
		fmt.Fprintf(os.Stderr, "  %s\n", f)
	}
	return false
}
