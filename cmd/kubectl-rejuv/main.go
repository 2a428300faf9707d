// Command kubectl-rejuv is the Rejuv kubectl plugin: restart containers in place, roll out restarts, test policies.
// So far it only answers --help and --version.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/rejuv-dev/rejuv/cmd/internal/cli"
)

func main() {
	fs := flag.NewFlagSet("kubectl-rejuv", flag.ContinueOnError)
	fs.Usage = cli.Usage(fs, "kubectl rejuv [flags]", "The Rejuv kubectl plugin: restart containers in place, roll out restarts, test policies.")
	if done, code := cli.Parse(fs, os.Args[1:], os.Stdout, os.Stderr); done {
		os.Exit(code)
	}
	fmt.Fprintln(os.Stderr, "kubectl-rejuv: nothing to run yet; this build only answers --help and --version")
	os.Exit(cli.ExitError)
}
