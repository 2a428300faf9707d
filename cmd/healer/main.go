// Command rejuv-healer is the Rejuv manager: the ContainerRecreateRequest
// admission and conversion webhooks, the CRR controller, and the webhook
// certificates. rejuv-healer prepare-uninstall, the chart's pre-delete
// hook, prepares an uninstall.
package main

import (
	"context"
	"fmt"
	"os"

	// Time zones of schedules and windows resolve in images without a
	// zoneinfo database too.
	_ "time/tzdata"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/rejuv-dev/rejuv/api/apps"
	"github.com/rejuv-dev/rejuv/cmd/internal/cli"
	"github.com/rejuv-dev/rejuv/healer"
	"github.com/rejuv-dev/rejuv/healer/uninstall"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "prepare-uninstall" {
		prepareUninstall(os.Args[2:])
		return
	}
	var opts healer.Options
	cli.Main(cli.Program{
		Name:        "rejuv-healer",
		Synopsis:    "rejuv-healer [flags]",
		Description: "The Rejuv manager: policy controller, CRR controller and admission webhooks.",
		Bind:        opts.BindFlags,
		Validate:    opts.Validate,
		Run: func(ctx context.Context, cfg *rest.Config) error {
			return healer.Run(ctx, cfg, opts, metricsServer(opts.MetricsAddr, opts.MetricsSecure, opts.Profiling))
		},
	})
}

// prepareUninstall is rejuv-healer prepare-uninstall: the chart's
// pre-delete hook, which pauses Rejuv for the uninstall and waits until no
// request is under way and no pod is held.
func prepareUninstall(args []string) {
	var opts uninstall.Options
	cli.Main(cli.Program{
		Name:     "rejuv-healer prepare-uninstall",
		Synopsis: "rejuv-healer prepare-uninstall [flags]",
		Description: "Prepare Rejuv's uninstall: pause every recreation cluster-wide until the installation is gone, " +
			"have the manager end every request, and wait until no pod is held out of its Services; fail, naming what is left, if that takes longer than --timeout.",
		Bind:     opts.BindFlags,
		Validate: opts.Validate,
		Args:     args,
		Run: func(ctx context.Context, cfg *rest.Config) error {
			scheme, err := apps.NewScheme()
			if err != nil {
				return err
			}
			c, err := client.New(cfg, client.Options{Scheme: scheme})
			if err != nil {
				return fmt.Errorf("a client of the API server: %w", err)
			}
			return uninstall.Prepare(ctx, c, opts)
		},
	})
}

// metricsServer is the manager's metrics endpoint: over HTTPS and, through
// controller-runtime's authentication and authorization filter, only to
// clients authorized to get /metrics when secure. With profiling it serves
// Go's runtime profiles too, behind the same filter: a client needs get on
// the non-resource URL /debug/pprof/*.
func metricsServer(addr string, secure, profiling bool) metricsserver.Options {
	o := metricsserver.Options{BindAddress: addr, SecureServing: secure}
	if secure {
		o.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	if profiling {
		o.ExtraHandlers = cli.ProfileHandlers()
	}
	return o
}
