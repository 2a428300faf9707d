package recreatepolicy

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/test/refusals"
)

// The failing rule's name, and the rule beside it that matches every
// annotated pod.
const (
	failingRule  = "faulty"
	matchingRule = "matching"
)

// TestEveryRuleFailure runs every rule failure of docs/validation.md in a
// policy on the real API server, beside a rule that matches every pod, and
// checks what a user sees: the condition and the Warning event that report
// it, and no request caused by the failing rule.
func TestEveryRuleFailure(t *testing.T) {
	needsAPIServer(t)
	for _, row := range refusals.RuleFailures {
		t.Run(row.Doing, func(t *testing.T) {
			ns := newNamespace(t)
			// The deadline is long enough for a rule to reach a sandbox
			// bound first on a loaded machine, and short enough that the
			// rows that run to it stay quick; the budget is past one pod's
			// evaluation of those (the deadline twice: all the rules at
			// once, then the failing one alone) and short of eight pods'.
			c := newController(t, 500*time.Millisecond)
			c.EvaluationBudget = time.Second
			n := max(row.Pods, 1)
			pods := createPods(t, ns, "web", n, c.clock.Now().Add(-time.Hour))
			for _, pod := range pods {
				annotate(t, pod)
			}
			p := createPolicy(t, ns, "p", v1alpha1.RecreatePolicySpec{
				Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				// The failing rule first: a request its result caused would
				// carry its trigger.
				Rules:   []v1alpha1.Rule{{Name: failingRule, Rego: row.Rego}, {Name: matchingRule, Rego: annotated}},
				Rollout: v1alpha1.Rollout{MaxUnavailable: new(intstr.FromString("100%"))},
				Limits:  v1alpha1.Limits{MaxMatchingPercent: new(int32(100))},
			})
			c.reconcile(t, p)

			status := getPolicy(t, p).Status
			if !meta.IsStatusConditionTrue(status.Conditions, v1alpha1.ConditionRulesCompiled) || int(status.SelectedPods) != n {
				t.Fatalf("RulesCompiled %+v, %d pods selected; want the rules compiled and %d pods selected",
					meta.FindStatusCondition(status.Conditions, v1alpha1.ConditionRulesCompiled), status.SelectedPods, n)
			}
			cond := meta.FindStatusCondition(status.Conditions, row.Report.Condition)
			if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != row.Report.Reason || !strings.Contains(cond.Message, row.Message) {
				t.Errorf("%s = %+v, want True with reason %s and a message containing %q", row.Report.Condition, cond, row.Report.Reason, row.Message)
			}
			if row.Report == refusals.RuleFailed && (cond == nil || !strings.Contains(cond.Message, fmt.Sprintf("rule %s failed for %d pods", failingRule, n))) {
				t.Errorf("Ready = %+v, want it to name rule %s, failed for %d pods", cond, failingRule, n)
			}
			if e, ok := warned(c, row.Report.Event, row.Message); !ok {
				t.Errorf("no Warning event %s containing %q; events: %s", row.Report.Event, row.Message, e)
			}
			checkRequests(t, p, row.Report, n)
		})
	}
}

// checkRequests: the failing rule caused no request. Where the policy acts
// on the other rule's results, that rule's requests are there.
func checkRequests(t *testing.T, p *v1alpha1.RecreatePolicy, report refusals.Report, pods int) {
	t.Helper()
	crrs := requestsOf(t, p)
	for _, crr := range crrs {
		if trigger := crr.Labels[appsv1beta1.TriggerLabel]; trigger != "rule."+matchingRule {
			t.Errorf("request %s triggered by %s, want only rule.%s's", crr.Name, trigger, matchingRule)
		}
	}
	want := pods
	if report == refusals.OverBudget || report == refusals.Stopped {
		want = 0
	}
	if len(crrs) != want {
		t.Errorf("%d requests, want %d", len(crrs), want)
	}
}

// warned drains the recorded events and reports whether one was a Warning
// of reason whose note contains note; else it returns the events seen.
func warned(c *testReconciler, reason, note string) (string, bool) {
	var seen []string
	for {
		select {
		case e := <-c.recorder.Events:
			if strings.HasPrefix(e, "Warning "+reason+" ") && strings.Contains(e, note) {
				return "", true
			}
			seen = append(seen, e)
		default:
			return strings.Join(seen, "; "), false
		}
	}
}
