// Command rejuv-daemon is the Rejuv node daemon: it executes ContainerRecreateRequests of its node through the CRI.
// So far it only answers --help and --version.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/rejuv-dev/rejuv/cmd/internal/cli"
)

func main() {
	fs := flag.NewFlagSet("rejuv-daemon", flag.ContinueOnError)
	fs.Usage = cli.Usage(fs, "rejuv-daemon [flags]", "The Rejuv node daemon: executes ContainerRecreateRequests of its node through the CRI.")
	if done, code := cli.Parse(fs, os.Args[1:], os.Stdout, os.Stderr); done {
		os.Exit(code)
	}
	fmt.Fprintln(os.Stderr, "rejuv-daemon: nothing to run yet; this build only answers --help and --version")
	os.Exit(cli.ExitError)
}
