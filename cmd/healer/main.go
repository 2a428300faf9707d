// Command rejuv-healer is the Rejuv manager: the ContainerRecreateRequest
// admission and conversion webhooks, the CRR controller, and the webhook
// certificates.
package main

import (
	"flag"
	"fmt"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/rejuv-dev/rejuv/cmd/internal/buildinfo"
	"github.com/rejuv-dev/rejuv/cmd/internal/cli"
	"github.com/rejuv-dev/rejuv/healer"
)

func main() {
	fs := flag.NewFlagSet("rejuv-healer", flag.ContinueOnError)
	fs.Usage = cli.Usage(fs, "rejuv-healer [flags]", "The Rejuv manager: policy controller, CRR controller and admission webhooks.")
	var opts healer.Options
	opts.BindFlags(fs)
	logOpts := zap.Options{}
	logOpts.BindFlags(fs)
	if done, code := cli.Parse(fs, os.Args[1:], os.Stdout, os.Stderr); done {
		os.Exit(code)
	}
	if err := opts.Validate(); err != nil {
		fmt.Fprintf(os.Stderr, "rejuv-healer: %v\n", err)
		os.Exit(cli.ExitUsage)
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&logOpts)))
	log := ctrl.Log.WithName("rejuv-healer")
	log.Info("starting", "version", buildinfo.String("rejuv-healer"))
	ctx := ctrl.LoggerInto(ctrl.SetupSignalHandler(), log)
	if err := healer.Run(ctx, opts); err != nil {
		log.Error(err, "manager stopped")
		os.Exit(cli.ExitError)
	}
}
