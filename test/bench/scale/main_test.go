package scale

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/kubernetes"

	"github.com/rejuv-dev/rejuv/test/cluster/harness"
	"github.com/rejuv-dev/rejuv/test/deploy"
)

var (
	cluster *harness.Cluster
	stack   *deploy.Stack
	kwok    *harness.Kwok
	// fleet is the client that creates, scales and counts the fleet, at
	// 200 requests a second: the clientset's default 5 would make the
	// benchmark measure its own throttling.
	fleet  kubernetes.Interface
	sizing = scaleSizing()
)

// TestMain brings up the cluster, Rejuv and kwok only when benchmarks
// run: plain `go test ./...` runs nothing here.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		os.Exit(m.Run())
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx := context.Background()
	c, release, err := harness.Shared(ctx)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: start the cluster: %v\n", err)
		return 1
	}
	defer release()
	cluster = c
	cfg, err := c.RESTConfig()
	if err == nil {
		cfg.QPS, cfg.Burst = 200, 400
		fleet, err = kubernetes.NewForConfig(cfg)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: fleet client: %v\n", err)
		return 1
	}
	overlay := filepath.Join("test", "bench", "scale", "overlay")
	if stack, err = deploy.Install(ctx, c, deploy.Options{Kustomization: overlay}); err != nil {
		fmt.Fprintf(os.Stderr, "bench: install Rejuv: %v\n", err)
		return 1
	}
	if kwok, err = c.StartKwok(ctx, harness.KwokOptions{Nodes: sizing.nodes}); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		return 1
	}
	code := m.Run()
	if code != 0 {
		fmt.Fprint(os.Stderr, stack.Describe(ctx))
	}
	if err := removeFleet(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		code = 1
	}
	if err := removeProfiler(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		code = 1
	}
	if err := kwok.Stop(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		code = 1
	}
	if err := stack.Uninstall(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		return 1
	}
	return code
}
