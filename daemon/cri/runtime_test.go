package cri

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/rejuv-dev/rejuv/test/cluster/harness"
)

// cluster is the shared real cluster; its containerd is the runtime under
// test. Nil under -short.
var cluster *harness.Cluster

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	c, release, err := harness.Shared(context.Background())
	if err != nil {
		fmt.Fprintf(os.Stderr, "start the cluster: %v\n", err)
		os.Exit(1)
	}
	cluster = c
	code := m.Run()
	release()
	os.Exit(code)
}

// TestDetectFindsContainerdUnderTheRunDirectory: the harness's containerd
// listens at its well-known socket, so the run directory holding it is
// found as a node's /run is.
func TestDetectFindsContainerdUnderTheRunDirectory(t *testing.T) {
	if cluster == nil {
		t.Skip("needs the real cluster; run without -short (make test)")
	}
	c, err := Detect(context.Background(), "", filepath.Dir(filepath.Dir(cluster.CRISocket())))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Socket != cluster.CRISocket() || c.Name() != "containerd" || c.Version() == "" {
		t.Fatalf("detected %s at %s version %q, want containerd at %s", c.Name(), c.Socket, c.Version(), cluster.CRISocket())
	}
	if got := testutil.ToFloat64(runtimeInfo.WithLabelValues("containerd", c.Version())); got != 1 {
		t.Errorf("rejuv_daemon_runtime_info{containerd,%s} = %v, want 1", c.Version(), got)
	}
	if n := testutil.CollectAndCount(criRequestDuration, "rejuv_daemon_cri_request_duration_seconds"); n == 0 {
		t.Error("the Version call was not timed")
	}
	if err := c.Check(context.Background()); err != nil {
		t.Errorf("Check: %v", err)
	}
}

// TestClientRecoversWhenTheRuntimeRestarts stops and restarts a containerd
// of its own: calls fail clearly while it is down and succeed again, on the
// same client, once it is back.
func TestClientRecoversWhenTheRuntimeRestarts(t *testing.T) {
	if cluster == nil {
		t.Skip("needs root and the cluster's programs; run without -short (make test)")
	}
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "rejuv-ctrd")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctrd, err := harness.StartContainerd(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := ctrd.Close(ctx); err != nil {
			t.Errorf("close containerd: %v", err)
		}
	}()
	c, err := Detect(ctx, ctrd.Socket(), "/nonexistent")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	if err := ctrd.Stop(); err != nil {
		t.Fatal(err)
	}
	err = c.Check(ctx)
	if err == nil || !strings.Contains(err.Error(), "container runtime at "+ctrd.Socket()+" does not answer") {
		t.Fatalf("Check with containerd stopped = %v, want a clear error", err)
	}
	if err := ctrd.Start(ctx); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 15*time.Second, true, func(ctx context.Context) (bool, error) {
		return c.Check(ctx) == nil, nil
	})
	if err != nil {
		t.Fatalf("client did not recover after containerd came back: %v", c.Check(ctx))
	}
	t.Logf("client answered again %s after containerd was back", time.Since(start).Round(time.Millisecond))
}
