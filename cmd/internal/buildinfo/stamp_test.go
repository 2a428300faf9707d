package buildinfo

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBinariesReportStampedVersion builds each binary the way the Makefile
// does and checks that --version and --help answer as a user sees them.
func TestBinariesReportStampedVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the three binaries; run without -short (make test)")
	}
	const pkg = "github.com/rejuv-dev/rejuv/cmd/internal/buildinfo"
	ldflags := "-X " + pkg + ".Version=v0.0.0-test -X " + pkg + ".Commit=feedbee"
	for _, b := range []struct{ dir, name string }{
		{"healer", "rejuv-healer"},
		{"daemon", "rejuv-daemon"},
		{"kubectl-rejuv", "kubectl-rejuv"},
	} {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			bin := filepath.Join(t.TempDir(), b.name)
			build := exec.Command("go", "build", "-ldflags", ldflags, "-o", bin, "github.com/rejuv-dev/rejuv/cmd/"+b.dir)
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("go build: %v\n%s", err, out)
			}
			out, err := exec.Command(bin, "--version").CombinedOutput()
			if err != nil {
				t.Fatalf("%s --version: %v\n%s", b.name, err, out)
			}
			if want := b.name + " version v0.0.0-test (commit feedbee,"; !strings.HasPrefix(string(out), want) {
				t.Errorf("%s --version = %q, want prefix %q", b.name, out, want)
			}
			out, err = exec.Command(bin, "--help").CombinedOutput()
			if err != nil {
				t.Fatalf("%s --help: %v\n%s", b.name, err, out)
			}
			// The daemons' flag package prints "Usage: ... -version", the
			// plugin's cobra "Usage:" and "--version".
			if !strings.Contains(string(out), "Usage:") || !strings.Contains(string(out), "-version") {
				t.Errorf("%s --help = %q, want usage listing -version", b.name, out)
			}
			if err := exec.Command(bin, "--no-such-flag").Run(); err == nil {
				t.Errorf("%s --no-such-flag exited 0, want a usage error", b.name)
			}
		})
	}
}
