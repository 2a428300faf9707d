// Command rejuv-daemon is the Rejuv node daemon: it connects to the node's
// container runtime over the CRI. Executing ContainerRecreateRequests comes
// next; so far it finds the runtime and reports it in its readiness and
// metrics.
package main

import (
	"flag"
	"fmt"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/rejuv-dev/rejuv/cmd/internal/buildinfo"
	"github.com/rejuv-dev/rejuv/cmd/internal/cli"
	"github.com/rejuv-dev/rejuv/daemon"
)

func main() {
	fs := flag.NewFlagSet("rejuv-daemon", flag.ContinueOnError)
	fs.Usage = cli.Usage(fs, "rejuv-daemon [flags]", "The Rejuv node daemon: executes ContainerRecreateRequests of its node through the CRI.")
	var opts daemon.Options
	opts.BindFlags(fs)
	logOpts := zap.Options{}
	logOpts.BindFlags(fs)
	if done, code := cli.Parse(fs, os.Args[1:], os.Stdout, os.Stderr); done {
		os.Exit(code)
	}
	if err := opts.Validate(); err != nil {
		fmt.Fprintf(os.Stderr, "rejuv-daemon: %v\n", err)
		os.Exit(cli.ExitUsage)
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&logOpts)))
	log := ctrl.Log.WithName("rejuv-daemon")
	log.Info("starting", "version", buildinfo.String("rejuv-daemon"))
	ctx := ctrl.LoggerInto(ctrl.SetupSignalHandler(), log)
	if err := daemon.Run(ctx, opts); err != nil {
		log.Error(err, "daemon stopped")
		os.Exit(cli.ExitError)
	}
}
