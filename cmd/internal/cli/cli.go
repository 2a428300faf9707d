package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/rejuv-dev/rejuv/cmd/internal/buildinfo"
)

// Exit codes shared by the binaries.
const (
	ExitOK    = 0
	ExitError = 1
	ExitUsage = 2
)

// Parse registers --version on fs, parses args and handles --help and
// --version itself. When done is true the program should exit with code;
// otherwise the flags are parsed and the program goes on.
func Parse(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (done bool, code int) {
	version := fs.Bool("version", false, "print the version and exit")
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			fs.Usage()
			return true, ExitOK
		}
		return true, ExitUsage
	}
	if *version {
		buildinfo.Print(stdout, fs.Name())
		return true, ExitOK
	}
	return false, ExitOK
}

// Usage returns a flag.FlagSet usage function that prints the synopsis and
// description, then the flags.
func Usage(fs *flag.FlagSet, synopsis, description string) func() {
	return func() {
		out := fs.Output()
		fmt.Fprintf(out, "Usage: %s\n\n%s\n\nFlags:\n", synopsis, description)
		fs.PrintDefaults()
	}
}
