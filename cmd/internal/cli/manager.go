package cli

import (
	"context"
	"flag"
	"fmt"
	"os"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager/signals"

	"github.com/rejuv-dev/rejuv/cmd/internal/buildinfo"
)

// Program describes a binary that runs a controller manager until a
// signal: the healer and the daemon.
type Program struct {
	Name, Synopsis, Description string
	// Bind registers the program's own flags.
	Bind func(*flag.FlagSet)
	// Validate checks them, naming each bad flag.
	Validate func() error
	// Run runs until ctx ends.
	Run func(ctx context.Context, cfg *rest.Config) error
	// Args are the arguments to parse; nil is the command line's.
	Args []string
}

// Flags is a program's whole flag set, as its --help lists it: --kubeconfig,
// the program's own (bind) and the logging flags; it returns where the
// first and the last are parsed to.
func Flags(name string, bind func(*flag.FlagSet)) (fs *flag.FlagSet, kubeconfig *string, logOpts *zap.Options) {
	fs = flag.NewFlagSet(name, flag.ContinueOnError)
	kubeconfig = fs.String("kubeconfig", "", "kubeconfig to use outside the cluster (default: $KUBECONFIG when set, else the in-cluster config, else $HOME/.kube/config)")
	bind(fs)
	logOpts = &zap.Options{}
	logOpts.BindFlags(fs)
	return fs, kubeconfig, logOpts
}

// Main parses the flags (the program's, --kubeconfig, --version and the
// logging flags), validates them, sets up logging and signal handling, finds
// the cluster and runs the program; it exits with the right code.
func Main(p Program) {
	fs, kubeconfig, logOpts := Flags(p.Name, p.Bind)
	fs.Usage = Usage(fs, p.Synopsis, p.Description)
	args := p.Args
	if args == nil {
		args = os.Args[1:]
	}
	if done, code := Parse(fs, args, os.Stdout, os.Stderr); done {
		os.Exit(code)
	}
	if err := p.Validate(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", p.Name, err)
		os.Exit(ExitUsage)
	}
	log.SetLogger(zap.New(zap.UseFlagOptions(logOpts)))
	logger := log.Log.WithName(p.Name)
	logger.Info("starting", "version", buildinfo.String(p.Name))
	cfg, err := restConfig(*kubeconfig)
	if err != nil {
		logger.Error(err, "cannot reach the cluster")
		os.Exit(ExitError)
	}
	ctx := log.IntoContext(signals.SetupSignalHandler(), logger)
	if err := p.Run(ctx, cfg); err != nil {
		logger.Error(err, "stopped")
		os.Exit(ExitError)
	}
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("--kubeconfig %s: %w", kubeconfig, err)
		}
		// As config.GetConfig does in the cluster: no client-side rate limit
		// (API priority and fairness applies), rather than client-go's 5
		// requests a second, which held up a burst of requests' webhooks.
		if cfg.QPS == 0 {
			cfg.QPS = -1
		}
		return cfg, nil
	}
	cfg, err := config.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("find the cluster (in-cluster config or $KUBECONFIG): %w", err)
	}
	return cfg, nil
}
