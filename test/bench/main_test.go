package bench

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/rejuv-dev/rejuv/test/cluster/harness"
	"github.com/rejuv-dev/rejuv/test/deploy"
	"github.com/rejuv-dev/rejuv/test/images"
)

var (
	cluster *harness.Cluster
	stack   *deploy.Stack
)

// TestMain brings up the cluster and Rejuv only when benchmarks run: plain
// `go test ./...` runs nothing here.
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
	if _, err := c.BuildImage(ctx, images.TestApp); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		return 1
	}
	if stack, err = deploy.Install(ctx, c, deploy.Options{}); err != nil {
		fmt.Fprintf(os.Stderr, "bench: install Rejuv: %v\n", err)
		return 1
	}
	code := m.Run()
	if code != 0 {
		fmt.Fprint(os.Stderr, stack.Describe(ctx))
	}
	if err := stack.Uninstall(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		return 1
	}
	return code
}
