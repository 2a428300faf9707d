// Package cli owns what Rejuv's three binaries share on the command line:
// --help and --version handling and the exit codes that go with them.
// Each binary's flags stay in its own main.go.
package cli
