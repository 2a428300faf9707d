// Command rejuv-healer is the Rejuv manager: the ContainerRecreateRequest
// admission and conversion webhooks, the CRR controller, and the webhook
// certificates.
package main

import (
	"context"
	// Time zones of schedules and windows resolve in images without a
	// zoneinfo database too.
	_ "time/tzdata"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/rejuv-dev/rejuv/cmd/internal/cli"
	"github.com/rejuv-dev/rejuv/healer"
)

func main() {
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
