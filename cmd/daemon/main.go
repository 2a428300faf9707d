// Command rejuv-daemon is the Rejuv node daemon: it finds the node's
// container runtime and executes the ContainerRecreateRequests of its node
// through the CRI.
package main

import (
	"context"

	"k8s.io/client-go/rest"

	"github.com/rejuv-dev/rejuv/cmd/internal/cli"
	"github.com/rejuv-dev/rejuv/daemon"
)

func main() {
	var opts daemon.Options
	cli.Main(cli.Program{
		Name:        "rejuv-daemon",
		Synopsis:    "rejuv-daemon [flags]",
		Description: "The Rejuv node daemon: executes ContainerRecreateRequests of its node through the CRI.",
		Bind:        opts.BindFlags,
		Validate:    opts.Validate,
		Run: func(ctx context.Context, cfg *rest.Config) error {
			return daemon.Run(ctx, cfg, opts)
		},
	})
}
