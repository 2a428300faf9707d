package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// hostileModule is a rule module whose recreate body holds body, with defs
// beside it.
func hostileModule(defs, body string) string {
	return "package hostile\nimport rego.v1\n" + defs + "recreate contains c.name if {\n\tsome c in input.containers\n\t" + body + "\n}\n"
}

// TestTenantRulesCannotStallTheManager: a namespace's editor, who may write
// policies there, writes the rules that took the manager's CPU or memory
// before the sandbox audited its built-ins; on the installed stack, the
// webhook refuses those it can tell at once (naming the rule, the line and
// the built-in or the value), quickly, and the manager halts the policy of
// one that passes a built-in's bound when it runs, naming the rule, the pod
// and the bound, and recreates nothing for it.
func TestTenantRulesCannotStallTheManager(t *testing.T) {
	t.Parallel()
	pod := labelledPod(t, "target")
	ns := pod.Namespace
	asEditor(t, ns)
	tenant := impersonate(t, editorUser, nil, "")

	var chain strings.Builder
	chain.WriteString("a0 := [\"x\"]\nb0 := [\"y\"]\n")
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(&chain, "a%d := [a%d, a%d]\nb%d := [b%d, b%d]\n", i, i-1, i-1, i, i-1, i-1)
	}
	var graph []string
	for i := range 10 {
		var edges []string
		for j := range 10 {
			if i != j {
				edges = append(edges, fmt.Sprintf(`"%d"`, j))
			}
		}
		graph = append(graph, fmt.Sprintf(`"%d": [%s]`, i, strings.Join(edges, ", ")))
	}
	refused := []struct{ name, module, want string }{
		{"reachable-paths", hostileModule("", "count(graph.reachable_paths({"+strings.Join(graph, ", ")+`}, {"0"})) > 0`), "undefined function graph.reachable_paths"},
		{"glob", hostileModule("", `glob.match("*a*a*a*a*a*a*c*", [], concat("", ["a" | some i in numbers.range(1, 100)]))`), "undefined function glob.match"},
		{"globs", hostileModule("", `regex.globs_match(".*a.*a.*a.*a.*a.*a.*a.*abc*", "aaaaaaaaaaaaaaaaaaaaaaaaaaaac*")`), "undefined function regex.globs_match"},
		{"type-checker", hostileModule(chain.String(), "x := a12 in [b12]\n\tx"), "once its references are expanded"},
	}
	for _, h := range refused {
		p := builtinPolicy(ns, h.name, "target", "max-age", nil)
		p.Spec.Rules = []v1alpha1.Rule{{Name: h.name, Rego: h.module}}
		start := time.Now()
		err := tenant.Create(context.Background(), p)
		took := time.Since(start)
		t.Logf("%s: refused in %s: %v", h.name, took.Round(time.Millisecond), err)
		if err == nil || !strings.Contains(err.Error(), "spec.rules[0].rego") || !strings.Contains(err.Error(), `rule "`+h.name+`"`) || !strings.Contains(err.Error(), h.want) {
			t.Errorf("%s: got %v, want it refused on spec.rules[0].rego naming rule %s and %q", h.name, err, h.name, h.want)
		}
		if took > 3*time.Second {
			t.Errorf("%s: the webhook took %s to refuse it", h.name, took)
		}
	}

	p := builtinPolicy(ns, "widths", "target", "max-age", nil)
	p.Spec.Rules = []v1alpha1.Rule{{Name: "widths", Rego: hostileModule("", `count(sprintf(concat("", ["%*d" | some i in numbers.range(1, 2000)]), [n | some i in numbers.range(1, 4000); n := 1000000])) > 0`)}}
	if err := tenant.Create(context.Background(), p); err != nil {
		t.Fatalf("the tenant's policy that passes a bound when it runs: %v", err)
	}
	want := `the sandbox stopped rule "widths" for pod ` + ns + `/` + pod.Name + `: `
	var halted *metav1.Condition
	waitWithin(t, "the policy halted by the sandbox", time.Minute, func() bool {
		halted = meta.FindStatusCondition(readPolicy(t, rejuvStack(t).Client, ns, p.Name).Status.Conditions, v1alpha1.ConditionHalted)
		return halted != nil && halted.Status == metav1.ConditionTrue
	})
	t.Logf("Halted: %s: %s", halted.Reason, halted.Message)
	if halted.Reason != v1alpha1.ReasonRuleStopped || !strings.Contains(halted.Message, want) || !strings.Contains(halted.Message, "sprintf: a width or precision taken from the arguments") {
		t.Errorf("Halted %s: %s, want reason %s naming the rule, the pod and sprintf's bound", halted.Reason, halted.Message, v1alpha1.ReasonRuleStopped)
	}
	if n := len(policyRequests(t, rejuvStack(t).Client, ns, p.Name)); n != 0 {
		t.Errorf("%d requests of the halted policy, want none", n)
	}
}
