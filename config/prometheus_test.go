package config

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/rejuv-dev/rejuv/test/cluster/harness"
)

// TestAlertRules: promtool, Debian's, finds the rules file valid and its
// unit tests (prometheus/rules_test.yaml) pass: each alert fires on the
// series that should raise it, with the labels and text it should have.
func TestAlertRules(t *testing.T) {
	if testing.Short() {
		t.Skip("installs Debian's prometheus package when promtool is missing; runs without -short")
	}
	promtool, err := harness.EnsurePromtool(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"check", "rules", "rules.yaml"}, {"test", "rules", "rules_test.yaml"}} {
		cmd := exec.CommandContext(t.Context(), promtool, args...)
		cmd.Dir = "prometheus"
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
