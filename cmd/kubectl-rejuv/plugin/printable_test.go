package plugin

import (
	"bytes"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// hostile is a reason a tenant writes in its rule, request or status: it
// clears the admin's screen, returns to the line's start, and ends the
// line to forge a row of another namespace.
const hostile = "leak\x1b[2J\rok\tcell\nbank  payments-0  Succeeded  fake row"

// TestTenantTextIsEscaped: what the plugin prints of reasons and messages
// that tenants control cannot move the cursor, end a line or add a cell:
// their control characters are printed escaped, in each output that shows
// them.
func TestTenantTextIsEscaped(t *testing.T) {
	decision := v1alpha1.Decision{Time: metav1.NewTime(now.Add(-time.Minute)), Pod: "web-0", Containers: []string{"app"},
		Trigger: "rule/leak", Outcome: v1alpha1.OutcomeCooldown, Reason: hostile, Message: hostile}
	request := requestStatus{Namespace: "shop", Name: "web-0-x", Pod: "web-0", Source: "manual", Reason: hostile, Phase: "Recreating",
		Message: hostile, Containers: []containerStatus{{Name: "app", Phase: "Recreating", Message: hostile}}, Created: now.Add(-time.Minute)}
	result := podResult{Pod: "web-0", Containers: []string{"app"}, Outcome: string(v1alpha1.OutcomeCooldown), Reason: hostile, Message: hostile}
	for _, tc := range []struct {
		name   string
		render func(*bytes.Buffer) error
	}{
		{"status -A", func(b *bytes.Buffer) error {
			return statusText{w: b, now: now, allNamespaces: true, wide: true}.render(&statusReport{Target: "all namespaces",
				Requests: []requestStatus{request},
				Policies: []policyStatus{{Namespace: "shop", Name: "heal", Ready: "True", Halted: hostile, Decisions: []v1alpha1.Decision{decision},
					NoData: []v1alpha1.RuleNoData{{Rule: "leak", Signal: "memory", Pods: 1, Reason: hostile}}}}})
		}},
		{"explain", func(b *bytes.Buffer) error {
			e := &explanation{Pod: "web-0", Namespace: "shop", Node: "node-a", Phase: "Running", Requests: []requestStatus{request}, now: now,
				Policies: []policyExplained{{Name: "heal", Selects: true, Ready: "True", Halted: hostile, Decisions: []v1alpha1.Decision{decision}, Now: &result}}}
			return e.render(b)
		}},
		{"policy test", func(b *bytes.Buffer) error {
			return policyTestText{w: b, wide: true}.render(&policyTestReport{At: now,
				Policies: []policyTestResult{{Policy: "heal", Namespace: "shop", Selected: 1, Halted: hostile, Pods: []podResult{result}}}})
		}},
		{"restart follow", func(b *bytes.Buffer) error {
			newProgress(b, false, "restart", func() time.Time { return now }).event("pod %s: %s%s", "web-0", "Failed", suffixed(hostile))
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.render(&b); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if strings.ContainsAny(out, "\x1b\r\t") || strings.Contains(out, "\nbank") {
				t.Errorf("the tenant's text is printed raw:\n%q", out)
			}
			if !strings.Contains(out, `leak\x1b[2J\rok\tcell\nbank  payments-0`) {
				t.Errorf("the tenant's text is not printed escaped:\n%q", out)
			}
		})
	}
}

func TestPrintable(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain text is kept", `rule "leak": 1.2 GiB > 1 GiB, ümlaut`, `rule "leak": 1.2 GiB > 1 GiB, ümlaut`},
		{"a screen clear", "a\x1b[2Jb", `a\x1b[2Jb`},
		{"a carriage return", "ok\rforged", `ok\rforged`},
		{"a new row", "reason\nfake row", `reason\nfake row`},
		{"a new cell", "reason\tcell", `reason\tcell`},
		{"a bidirectional override", "abc\u202edef", `abc\u202edef`},
		{"bytes that are not UTF-8", "a\xffb", `a\xffb`},
		{"the replacement character itself", "a\ufffdb", "a\ufffdb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := printable(tc.in); got != tc.want {
				t.Errorf("printable(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
