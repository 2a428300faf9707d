package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rejuv-dev/rejuv/config"
	"github.com/rejuv-dev/rejuv/test/cluster/harness"
	"github.com/rejuv-dev/rejuv/test/deploy"
	"github.com/rejuv-dev/rejuv/test/images"
)

// namespace is where the samples live.
const namespace = "rejuv-demo"

func main() {
	duration := flag.Duration("duration", 4*time.Minute, "how long to show what happens")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, *duration)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "demo: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, duration time.Duration) error {
	say("starting the local cluster (reused when it is up; the first time builds Kubernetes, helm, metrics-server, kwok and krew, about 5 minutes on 2 cores)")
	cfg, err := harness.DefaultConfig()
	if err != nil {
		return err
	}
	cluster, err := harness.Up(ctx, cfg)
	if err != nil {
		return fmt.Errorf("start the cluster: %w", err)
	}
	say("building the samples' image (the demo app, rejuv-demo) and pushing it to the cluster's registry, which the node pulls from")
	version, err := config.Version()
	if err != nil {
		return err
	}
	demo, err := cluster.BuildImage(ctx, images.Demo(version, deploy.Commit))
	if err != nil {
		return err
	}
	say("building Rejuv's images, pushing them to the cluster's registry and installing Rejuv as config/default describes it (make deploy), the images pinned by digest")
	stack, err := deploy.Install(ctx, cluster, deploy.Options{Kustomization: "config/default", Keep: true})
	if err != nil {
		return fmt.Errorf("install Rejuv: %w", err)
	}
	defer func() {
		fmt.Println()
		say("Rejuv keeps running in the cluster, and so do the samples:")
		fmt.Printf("\n  export KUBECONFIG=%s\n", cluster.Kubeconfig())
		fmt.Printf("  kubectl -n %s get rp,crr,pods          # policies, requests, pods\n", namespace)
		fmt.Printf("  kubectl -n %s get rp -o wide           # with the last decision's pod and reason\n", namespace)
		fmt.Printf("  kubectl -n %s describe rp heal-frozen  # conditions, recent decisions, events\n", namespace)
		fmt.Printf("  kubectl -n %s describe rp heal-leaky   # the leak's decisions; status.noData while its window fills\n", namespace)
		fmt.Printf("  kubectl -n rejuv-system get pods           # the manager's two replicas and the node's daemon\n")
		fmt.Printf("  kubectl -n rejuv-system logs deploy/rejuv-healer\n")
		fmt.Printf("  kubectl explain rp.spec.rules\n\n")
		say("make demo again resumes; make undeploy removes Rejuv; make down stops the cluster and undoes its changes to this machine")
	}()
	say("building metrics-server and installing it in kube-system, for the memory rules (the first time builds it, about 5 minutes)")
	if _, err := deploy.InstallMetricsServer(ctx, cluster, stack.Client); err != nil {
		return err
	}
	say("applying config/samples (kustomize), the demo app's image from the cluster's registry")
	if err := applySamples(ctx, stack.Client, demo.Pushed); err != nil {
		return err
	}
	say(fmt.Sprintf("showing decisions and recreations for %s (Ctrl-C ends sooner):", duration))
	fmt.Println()
	f := newFeed(stack.Client)
	return f.run(ctx, duration)
}

func say(msg string) {
	fmt.Printf("%s  == %s\n", time.Now().Format("15:04:05"), msg)
}
