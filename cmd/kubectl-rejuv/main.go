// Command kubectl-rejuv is the Rejuv kubectl plugin: restart containers in
// place, roll restarts out, show what is recreated and why, test policies.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/rejuv-dev/rejuv/cmd/kubectl-rejuv/plugin"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := plugin.Run(ctx, os.Args[1:], genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}, term.IsTerminal(int(os.Stdout.Fd())))
	stop()
	os.Exit(code)
}
