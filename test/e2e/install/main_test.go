package install

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/rejuv-dev/rejuv/test/cluster/harness"
	"github.com/rejuv-dev/rejuv/test/deploy"
	"github.com/rejuv-dev/rejuv/test/images"
)

var (
	cluster *harness.Cluster
	// helm is the helm binary, built from its Go module.
	helm string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	// Tests report through t.Log; controller-runtime's clients log nothing.
	ctrllog.SetLogger(logr.Discard())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	c, release, err := harness.Shared(ctx)
	if err != nil {
		fmt.Fprintf(os.Stderr, "install: start the cluster: %v\n", err)
		return 1
	}
	defer release()
	cluster = c
	if err := c.BuildImage(ctx, images.TestApp); err != nil {
		fmt.Fprintf(os.Stderr, "install: %v\n", err)
		return 1
	}
	if helm, err = harness.EnsureHelm(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "install: %v\n", err)
		return 1
	}
	// The images every install path names, as make images and a load onto
	// the node give them.
	if err := deploy.LoadImages(ctx, c); err != nil {
		fmt.Fprintf(os.Stderr, "install: %v\n", err)
		return 1
	}
	return m.Run()
}
