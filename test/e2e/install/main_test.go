package install

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/rejuv-dev/rejuv/test/cluster/harness"
	"github.com/rejuv-dev/rejuv/test/deploy"
	"github.com/rejuv-dev/rejuv/test/images"
)

var (
	// atExit runs after the tests, last added first.
	atExit  []func()
	cluster *harness.Cluster
	// pushed are Rejuv's images in the cluster's registry.
	pushed deploy.Pushed
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
	if _, err := c.BuildImage(ctx, images.TestApp); err != nil {
		fmt.Fprintf(os.Stderr, "install: %v\n", err)
		return 1
	}
	helm, err := harness.EnsureHelm(ctx)
	if err != nil {
		fmt.Fprintf(os.Stderr, "install: %v\n", err)
		return 1
	}
	// The README's commands (make deploy, kubectl, helm) find the
	// cluster's kubectl and the built helm first.
	tools := []string{filepath.Dir(c.Config.KubeBinary("kubectl")), filepath.Dir(helm), os.Getenv("PATH")}
	if err := os.Setenv("PATH", strings.Join(tools, string(os.PathListSeparator))); err != nil {
		fmt.Fprintf(os.Stderr, "install: %v\n", err)
		return 1
	}
	// Every install path pulls Rejuv's images from the cluster's registry,
	// where make images REGISTRY=... would have pushed them.
	if pushed, err = deploy.PushImages(ctx, c); err != nil {
		fmt.Fprintf(os.Stderr, "install: %v\n", err)
		return 1
	}
	stop, err := serveReleases()
	if err != nil {
		fmt.Fprintf(os.Stderr, "install: serve the releases the tests cut: %v\n", err)
		return 1
	}
	defer stop()
	defer func() {
		for _, f := range slices.Backward(atExit) {
			f()
		}
	}()
	return m.Run()
}
