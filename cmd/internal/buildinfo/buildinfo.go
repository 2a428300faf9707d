package buildinfo

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// Version and Commit are set by the linker:
// -X github.com/rejuv-dev/rejuv/cmd/internal/buildinfo.Version=v0.1.0.
var (
	Version = "dev"
	Commit  = ""
)

// String describes the build: the stamped version, the commit (from the
// linker, or from the Go build info when the binary was built from a VCS
// checkout) and the Go toolchain.
func String(binary string) string {
	commit := Commit
	if commit == "" {
		commit = vcsRevision()
	}
	if commit == "" {
		commit = "unknown"
	}
	return fmt.Sprintf("%s version %s (commit %s, %s, %s/%s)",
		binary, Version, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// Print writes String(binary) and a newline to w.
func Print(w io.Writer, binary string) {
	fmt.Fprintln(w, String(binary))
}

func vcsRevision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" {
			return s.Value
		}
	}
	return ""
}
