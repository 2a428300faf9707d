package recreatepolicy

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/signals"
)

// fakeSignals answers with fixed values per pod, or all missing with why,
// as if Prometheus had spent took on the queries.
type fakeSignals struct {
	pods map[string]float64
	why  string
	took time.Duration
}

func (f fakeSignals) Query(_ context.Context, _ string, s []v1alpha1.Signal, _ time.Time) *signals.Values {
	if f.why != "" {
		return signals.Unavailable([]string{s[0].Name}, f.why)
	}
	v := signals.NewValues()
	for pod, value := range f.pods {
		v.Set(pod, "", s[0].Name, value)
	}
	v.Spent(f.took)
	return v
}

// A rule that would match a pod without the signal: `not` holds for an
// undefined value.
const queueRule = `package queue
import rego.v1
recreate contains {"container": c.name, "reason": sprintf("queue %v", [input.signals.queue])} if {
	some c in input.containers
	input.signals.queue > 10
}
recreate contains {"container": c.name, "reason": "no queue reported"} if {
	some c in input.containers
	not input.signals.queue
}
`

// TestSignalsReachTheRules: a pod's signal value reaches input.signals;
// a pod without one, or every pod when the query fails, is no data with
// the reason, and never recreated, even by a rule that would match the
// signal's absence.
func TestSignalsReachTheRules(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	pods := createPods(t, ns, "web", 3, c.clock.Now().Add(-time.Hour))
	c.Signals = fakeSignals{pods: map[string]float64{pods[0].Name: 20, pods[1].Name: 5}}
	spec := rulePolicy("web", queueRule)
	spec.Signals = []v1alpha1.Signal{{Name: "queue", Query: `sum by (namespace, pod) (queue_length)`}}
	p := createPolicy(t, ns, "queues", spec)
	c.reconcile(t, p)
	crrs := requestsOf(t, p)
	if len(crrs) != 1 || crrs[0].Spec.PodName != pods[0].Name || !strings.Contains(crrs[0].Annotations["rejuv.dev/reason"], "queue 20") {
		t.Fatalf("requests %+v, want one for %s with its queue of 20", crrs, pods[0].Name)
	}
	want := v1alpha1.RuleNoData{Rule: "asked", Signal: "signals.queue", Pods: 1, Reason: "the query of signal queue returned no series for the pod"}
	if got := getPolicy(t, p).Status.NoData; len(got) != 1 || got[0] != want {
		t.Errorf("status.noData %+v, want %+v", got, want)
	}

	// The query fails: no pod is recreated.
	ns2 := newNamespace(t)
	createPods(t, ns2, "web", 2, c.clock.Now().Add(-time.Hour))
	c.Signals = fakeSignals{why: "the query of signal queue failed: bad_data: parse error"}
	p2 := createPolicy(t, ns2, "queues", spec)
	c.reconcile(t, p2)
	if n := len(requestsOf(t, p2)); n != 0 {
		t.Errorf("%d requests while the query fails", n)
	}
	want = v1alpha1.RuleNoData{Rule: "asked", Signal: "signals.queue", Pods: 2, Reason: "the query of signal queue failed: bad_data: parse error"}
	if got := getPolicy(t, p2).Status.NoData; len(got) != 1 || got[0] != want {
		t.Errorf("status.noData %+v, want %+v", got, want)
	}
}

// Without a Prometheus, a policy's signals have no values, and the status
// says the manager has none.
func TestSignalsWithoutPrometheus(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	createPods(t, ns, "web", 1, c.clock.Now().Add(-time.Hour))
	spec := v1alpha1.RecreatePolicySpec{
		Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Rules:    []v1alpha1.Rule{{Name: "asked", Rego: queueRule}},
		Signals:  []v1alpha1.Signal{{Name: "queue", Query: "queue_length"}},
		Rollout:  v1alpha1.Rollout{MaxUnavailable: new(intstr.FromString("100%"))},
	}
	p := createPolicy(t, ns, "queues", spec)
	c.reconcile(t, p)
	if n := len(requestsOf(t, p)); n != 0 {
		t.Errorf("%d requests without Prometheus", n)
	}
	if got := getPolicy(t, p).Status.NoData; len(got) != 1 || got[0].Reason != noPrometheus {
		t.Errorf("status.noData %+v, want the reason %q", got, noPrometheus)
	}
}

// TestSlowQueriesCountInTheEvaluationBudget: the time Prometheus spends on
// a policy's queries is the policy's: queries that take the whole budget
// halt the policy, before any pod is evaluated, saying so.
func TestSlowQueriesCountInTheEvaluationBudget(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	c.EvaluationBudget = 250 * time.Millisecond
	pods := createPods(t, ns, "web", 3, c.clock.Now().Add(-time.Hour))
	c.Signals = fakeSignals{pods: map[string]float64{pods[0].Name: 20}, took: time.Second}
	spec := rulePolicy("web", queueRule)
	spec.Signals = []v1alpha1.Signal{{Name: "queue", Query: `sum by (namespace, pod) (queue_length)`}}
	p := createPolicy(t, ns, "slowqueries", spec)
	c.reconcile(t, p)
	halted := meta.FindStatusCondition(getPolicy(t, p).Status.Conditions, v1alpha1.ConditionHalted)
	want := "(Prometheus 1s of it, on the signals' queries) for 0 of the 3 selected pods, over the budget of 250ms per pass"
	if halted == nil || halted.Status != metav1.ConditionTrue || halted.Reason != v1alpha1.ReasonEvaluationBudget || !strings.Contains(halted.Message, want) {
		t.Fatalf("Halted = %+v, want True for EvaluationBudget, saying %q", halted, want)
	}
	if n := len(requestsOf(t, p)); n != 0 {
		t.Errorf("%d requests from a policy halted by its queries", n)
	}
}
