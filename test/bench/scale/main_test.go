package scale

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/rejuv-dev/rejuv/test/cluster/harness"
	"github.com/rejuv-dev/rejuv/test/deploy"
	"github.com/rejuv-dev/rejuv/test/images"
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
	// restartTimes are the requests' durations on the real node, which
	// the stand-in's restarts are drawn from.
	restartTimes []time.Duration
	standin      *standIn
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
	// The benchmark reports through its own output, not controller-runtime's log.
	ctrllog.SetLogger(logr.Discard())
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
	if _, err := c.BuildImage(ctx, images.TestApp); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		return 1
	}
	overlay := filepath.Join("test", "bench", "scale", "overlay")
	if stack, err = deploy.Install(ctx, c, deploy.Options{Kustomization: overlay}); err != nil {
		fmt.Fprintf(os.Stderr, "bench: install Rejuv: %v\n", err)
		return 1
	}
	if sizing.gogc != "" {
		if err := setManagerGOGC(ctx, sizing.gogc); err != nil {
			fmt.Fprintf(os.Stderr, "bench: %v\n", err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "bench: the manager runs with GOGC=%s\n", sizing.gogc)
	}
	if kwok, err = c.StartKwok(ctx, harness.KwokOptions{Nodes: sizing.nodes}); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		return 1
	}
	if restartTimes, err = measureRestarts(ctx, c.NodeName()); err != nil {
		fmt.Fprintf(os.Stderr, "bench: measure restarts on the real node: %v\n", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "bench: %d requests on the real node took %v\n", len(restartTimes), restartTimes)
	// The stand-in writes for every simulated pod's restart what a
	// daemon and a kubelet would write: a limit of its own, high enough
	// never to hold a rolling restart back.
	standinCfg := rest.CopyConfig(cfg)
	standinCfg.QPS, standinCfg.Burst = 2000, 4000
	crrs, err := client.NewWithWatch(standinCfg, client.Options{Scheme: stack.Client.Scheme()})
	var standinKube kubernetes.Interface
	if err == nil {
		standinKube, err = kubernetes.NewForConfig(standinCfg)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: stand-in client: %v\n", err)
		return 1
	}
	standin = startStandIn(ctx, crrs, standinKube, restartTimes)
	if err := countManagerRequests(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		return 1
	}
	// A run that was stopped leaves its namespaces behind: their pods
	// would be counted, and the nodes they ran on are gone.
	if err := removeFleet(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "bench: remove what an earlier run left: %v\n", err)
		return 1
	}
	code := m.Run()
	standin.stop()
	if code != 0 {
		fmt.Fprint(os.Stderr, stack.Describe(ctx))
	}
	if err := removeFleet(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		code = 1
	}
	if err := removeRequestCounting(ctx); err != nil {
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
