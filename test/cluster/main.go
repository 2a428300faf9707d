// Command cluster starts, stops and describes Rejuv's local Kubernetes
// cluster of two nodes (the harness in package harness):
//
//	go run ./test/cluster up|down|status|env|build|helm|metrics-server|kwok
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/rejuv-dev/rejuv/test/cluster/harness"
)

const usage = `Usage: go run ./test/cluster COMMAND

Commands:
  up      start the cluster (or reuse it when it is running and healthy)
  down    stop the cluster and undo its changes to the host
  status  show the cluster's processes and whether the nodes are Ready
  build   build the cluster's Kubernetes binaries and containerd into the cache, and start nothing
  env     print shell exports for the running cluster (eval "$(go run ./test/cluster env)"),
          with its kubectl first on PATH
  helm    print the path of helm, built once into the cache (up builds it with Kubernetes)
  metrics-server
          print the path of metrics-server, built once into the cache (up builds it with Kubernetes)
  kwok    print the path of kwok, built once into the cache (for the scale benchmark; up does not build it)

Environment:
  REJUV_CLUSTER_DIR   instance directory (default <repo>/.cache/cluster)
  REJUV_CACHE_DIR     where built Kubernetes binaries are kept (default <repo>/.cache)
  REJUV_KUBERNETES    newest (default) or oldest: the Kubernetes release Rejuv supports to run
  REJUV_RUNTIME       containerd2 (default; containerd1 with REJUV_KUBERNETES=oldest) or containerd1
  REJUV_NODES         how many nodes run, 1 or 2 (default 2)
  REJUV_KUBE_BIN_DIR  prebuilt kube-apiserver, kube-controller-manager, kube-scheduler, kubelet
  REJUV_ETCD, REJUV_RUNC, REJUV_CNI_BIN_DIR, REJUV_IPTABLES, REJUV_IP,
  REJUV_UNSHARE, REJUV_NSENTER, REJUV_BUSYBOX
                      programs to use instead of looking for them or installing them
`

func main() {
	if len(os.Args) != 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := runCommand(ctx, os.Args[1])
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "cluster %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func runCommand(ctx context.Context, command string) error {
	if command == "help" || command == "-h" || command == "--help" {
		fmt.Print(usage)
		return nil
	}
	cfg, err := harness.DefaultConfig()
	if err != nil {
		return err
	}
	switch command {
	case "up":
		_, err := harness.Up(ctx, cfg)
		return err
	case "down":
		return harness.Down(ctx, cfg)
	case "build":
		return harness.Build(ctx, cfg)
	case "status":
		s, err := harness.Status(ctx, cfg)
		fmt.Print(s)
		return err
	case "env":
		fmt.Printf("export KUBECONFIG=%q\nexport REJUV_NODE_NAME=%q\nexport REJUV_CRI_SOCKET=%q\nexport PATH=%q:\"$PATH\"\n",
			cfg.Kubeconfig(), cfg.NodeName, cfg.CRISocket(), cfg.KubeBinDir())
		return nil
	case "helm", "metrics-server", "kwok":
		ensure := map[string]func(context.Context) (string, error){
			"helm": harness.EnsureHelm, "metrics-server": harness.EnsureMetricsServer, "kwok": harness.EnsureKwok,
		}[command]
		path, err := ensure(ctx)
		if err != nil {
			return err
		}
		fmt.Println(path)
		return nil
	default:
		return fmt.Errorf("unknown command %q\n%s", command, usage)
	}
}
