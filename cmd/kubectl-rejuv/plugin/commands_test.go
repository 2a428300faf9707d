package plugin

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/rejuv-dev/rejuv/cmd/internal/cli"
)

// runPlugin runs the command line as the binary does, without a cluster:
// what it printed, and its exit code.
func runPlugin(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	// No kubeconfig: a command that needs the cluster fails rather than
	// reaching one.
	args = append([]string{"--kubeconfig", "/nonexistent/kubeconfig"}, args...)
	code = Run(context.Background(), args, streams, false)
	return out.String(), errOut.String(), code
}

// TestCommandOutputs: the outputs of the commands that need no cluster,
// against their golden files.
func TestCommandOutputs(t *testing.T) {
	at := now.Format(time.RFC3339)
	test := []string{"policy", "test", "-f", "testdata/policytest-policies.yaml", "--pods", "testdata/policytest-pods.yaml", "--at", at}
	for _, tc := range []struct {
		golden string
		args   []string
		code   int
	}{
		{"policytest.txt", test, cli.ExitOK},
		{"policytest-wide.txt", append(test, "-o", "wide"), cli.ExitOK},
		{"policytest.json", append(test, "-o", "json"), cli.ExitOK},
		{"policytest-expect.txt", append(test, "--expect", "testdata/policytest-expect.yaml"), cli.ExitOK},
		{"policytest-expect-fail.txt", append(test, "--expect", "testdata/policytest-expect-fail.yaml"), cli.ExitError},
		{"policytest-input.json", append(test, "--input", "web-1"), cli.ExitOK},
		{"rules.txt", []string{"rules"}, cli.ExitOK},
		{"rules-max-age.yaml", []string{"rules", "max-age", "-o", "yaml"}, cli.ExitOK},
		{"rules.json", []string{"rules", "-o", "json"}, cli.ExitOK},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			stdout, stderr, code := runPlugin(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tc.code, stderr)
			}
			golden(t, tc.golden, []byte(stdout))
		})
	}
}

// TestBadCommandLines: each bad command line exits with a usage error (2)
// or an error (1) that names the flag or value and what to do.
func TestBadCommandLines(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"restart"}, cli.ExitUsage, "name what to restart: a pod, TYPE/NAME (deployment/web) or -l SELECTOR"},
		{[]string{"restart", "a", "b"}, cli.ExitUsage, "accepts at most 1 arg(s), received 2"},
		{[]string{"restart", "web-0", "--bogus"}, cli.ExitUsage, "unknown flag: --bogus"},
		{[]string{"restart", "web-0", "--dry-run=maybe"}, cli.ExitUsage, `--dry-run "maybe": must be "none", "server" or "client"`},
		{[]string{"restart", "web-0", "--deadline", "2s"}, cli.ExitUsage, "--deadline 2s: must be at least 3s"},
		{[]string{"restart", "web-0", "--wait", "--dry-run"}, cli.ExitUsage, "--wait follows a restart, which a dry run does not start"},
		{[]string{"restart", "web-0", "--unready-grace", "1500ms"}, cli.ExitUsage, "--unready-grace 1.5s: must be whole seconds, not negative"},
		{[]string{"restart", "web-0", "--unready-grace", "-1s"}, cli.ExitUsage, "--unready-grace -1s: must be whole seconds, not negative"},
		{[]string{"create", "crr", "x", "--pod", "p", "--failurePolicy", "Maybe"}, cli.ExitUsage, `--failurePolicy "Maybe": must be Fail or Ignore`},
		{[]string{"create", "crr", "--pod", "p"}, cli.ExitUsage, "name the request: kubectl rejuv create crr NAME --pod=POD"},
		{[]string{"create", "crr", "x"}, cli.ExitError, `required flag(s) "pod" not set`},
		{[]string{"create", "crr", "x", "--pod", "p", "--validate", "sometimes"}, cli.ExitUsage, `--validate "sometimes"`},
		{[]string{"status", "-o", "table"}, cli.ExitUsage, `--output "table": status prints as wide, json, yaml or name`},
		{[]string{"status", "-A", "web-0"}, cli.ExitUsage, "--all-namespaces shows everything"},
		{[]string{"pause"}, cli.ExitUsage, "pause needs --all: it stops every recreation of the cluster (to stop one policy, set its spec.suspend)"},
		{[]string{"pause", "--all", "--reason", strings.Repeat("x", 513)}, cli.ExitUsage, "--reason is 513 bytes, over its bound of 512"},
		{[]string{"resume"}, cli.ExitUsage, "resume needs --all"},
		{[]string{"rules", "nope"}, cli.ExitError, `no built-in rule "nope"; the rules are max-age, memory-leak`},
		{[]string{"rules", "--source"}, cli.ExitUsage, "--source prints one rule's Rego: name the rule"},
		{[]string{"policy", "test"}, cli.ExitError, `required flag(s) "filename" not set`},
		{[]string{"policy", "test", "-f", "testdata/policytest-pods.yaml", "--pods", "testdata/policytest-pods.yaml"}, cli.ExitUsage, "-f names no RecreatePolicy"},
		{[]string{"policy", "test", "-f", "testdata/policytest-policies.yaml", "--pods", "testdata/policytest-pods.yaml", "--at", "tomorrow"}, cli.ExitUsage, `--at "tomorrow": not an RFC 3339 time`},
		{[]string{"policy", "test", "-f", "testdata/bad-policy.yaml", "--pods", "testdata/policytest-pods.yaml"}, cli.ExitError, `-f: testdata/bad-policy.yaml, document 1: RecreatePolicy typo: unknown field "schedul"`},
		{[]string{"policy", "test", "-f", "testdata/policytest-policies.yaml", "--pods", "testdata/policytest-pods.yaml", "--input", "web-9"}, cli.ExitError, "no policy has rules that are evaluated for pod web-9"},
		{[]string{"policy", "test", "-f", "testdata/policytest-policies.yaml", "--pods", "testdata/policytest-pods.yaml", "--expect", "testdata/policytest-pods.yaml"}, cli.ExitError, `unknown field "apiVersion"`},
		{[]string{"policy", "backtest"}, cli.ExitError, `required flag(s) "filename" not set`},
		{[]string{"policy", "backtest", "-f", "testdata/policytest-policies.yaml", "--since", "a week"}, cli.ExitUsage, `--since "a week": not a duration such as 7d, 36h or 90m`},
		{[]string{"policy", "backtest", "-f", "testdata/policytest-policies.yaml", "--since", "40d"}, cli.ExitUsage, `--since "40d": at most 31d`},
		{[]string{"policy", "backtest", "-f", "testdata/policytest-policies.yaml", "--since", "-1h"}, cli.ExitUsage, `--since "-1h": must be positive`},
		{[]string{"policy", "backtest", "-f", "testdata/policytest-policies.yaml", "--until", "now"}, cli.ExitUsage, `--until "now": not an RFC 3339 time`},
		{[]string{"policy", "backtest", "-f", "testdata/policytest-policies.yaml", "-o", "wide"}, cli.ExitUsage, `--output "wide": policy backtest prints as json or yaml`},
		{[]string{"policy", "backtest", "-f", "testdata/policytest-policies.yaml", "--set", "minFit"}, cli.ExitUsage, `--set "minFit": "minFit" is not PARAM=VALUE or RULE.PARAM=VALUE`},
		{[]string{"policy", "backtest", "-f", "testdata/policytest-pods.yaml"}, cli.ExitUsage, "-f names no RecreatePolicy"},
		{[]string{"policy", "backtest", "-f", "testdata/policytest-policies.yaml", "--set", "noSuchParameter=1"}, cli.ExitUsage, "has the parameter noSuchParameter"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, stderr, code := runPlugin(t, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, tc.code, tc.want)
			}
		})
	}
}
