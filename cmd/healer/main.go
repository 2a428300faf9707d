// Command rejuv-healer is the Rejuv manager: policy controller, CRR controller and admission webhooks.
// So far it only answers --help and --version.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/rejuv-dev/rejuv/cmd/internal/cli"
)

func main() {
	fs := flag.NewFlagSet("rejuv-healer", flag.ContinueOnError)
	fs.Usage = cli.Usage(fs, "rejuv-healer [flags]", "The Rejuv manager: policy controller, CRR controller and admission webhooks.")
	if done, code := cli.Parse(fs, os.Args[1:], os.Stdout, os.Stderr); done {
		os.Exit(code)
	}
	fmt.Fprintln(os.Stderr, "rejuv-healer: nothing to run yet; this build only answers --help and --version")
	os.Exit(cli.ExitError)
}
