package plugin

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/rejuv-dev/rejuv/cmd/internal/buildinfo"
	"github.com/rejuv-dev/rejuv/cmd/internal/cli"
)

// Options are what every command shares: the kubeconfig flags, the
// streams, and the clients made from them on first use.
type Options struct {
	Config  *genericclioptions.ConfigFlags
	Streams genericiooptions.IOStreams
	// Terminal says whether Out is a terminal: progress is then drawn as
	// a bar rather than written a line per event.
	Terminal bool

	clients *clients
}

// NewCommand builds kubectl rejuv with its subcommands.
func NewCommand(streams genericiooptions.IOStreams, terminal bool) *cobra.Command {
	o := &Options{Config: genericclioptions.NewConfigFlags(true), Streams: streams, Terminal: terminal}
	root := &cobra.Command{
		Use:   "kubectl-rejuv",
		Short: "Restart containers in place, roll restarts out, test RecreatePolicies",
		Long: `kubectl rejuv drives Rejuv from the command line: it restarts the containers
of a pod, or of every pod of a workload in rolling batches, in place through
ContainerRecreateRequests; shows what is being recreated and why; and tests
RecreatePolicies against pods before they are applied.`,
		Version:       buildinfo.Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		Annotations: map[string]string{
			// cobra prints "kubectl rejuv" in usage lines when it knows it
			// runs as a kubectl plugin.
			cobra.CommandDisplayNameAnnotation: "kubectl rejuv",
		},
	}
	root.SetVersionTemplate(buildinfo.String("kubectl-rejuv") + "\n")
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	o.Config.AddFlags(root.PersistentFlags())
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &UsageError{msg: err.Error()} })
	root.AddCommand(
		newRestartCommand(o),
		newCreateCommand(o),
		newStatusCommand(o),
		newExplainCommand(o),
		newPolicyCommand(o),
		newRulesCommand(o),
		newPauseCommand(o),
		newResumeCommand(o),
	)
	registerCompletions(o, root)
	return root
}

// Run executes the command line and returns the process's exit code.
func Run(ctx context.Context, args []string, streams genericiooptions.IOStreams, terminal bool) int {
	root := NewCommand(streams, terminal)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return cli.ExitOK
	}
	if _, failed := errors.AsType[*FailedError](err); !failed {
		fmt.Fprintln(streams.ErrOut, "error:", err)
	}
	if _, usage := errors.AsType[*UsageError](err); usage {
		return cli.ExitUsage
	}
	return cli.ExitError
}
