package recreatepolicy

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// TestAFailedRuleRequestIsTriedAgain: a rule's request that failed left
// the container as it was, and the rule still finds it; once the cooldown
// has passed, the policy asks again, in a request of its own, rather than
// taking the failed one for a request in flight for as long as it is kept
// (an hour by default). Seen in the soak (seed 7): a stuck pod whose
// request failed while its node was NotReady stayed unready for the
// remaining eight minutes, every decision "InFlight: request exists
// already".
func TestAFailedRuleRequestIsTriedAgain(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	pods := createPods(t, ns, "web", 2, c.clock.Now().Add(-time.Hour))
	spec := rulePolicy("web", annotated)
	spec.Limits.Cooldown = &metav1.Duration{Duration: time.Minute}
	p := createPolicy(t, ns, "retry", spec)
	annotate(t, pods[0])

	names := map[string]bool{}
	for attempt := 1; attempt <= 3; attempt++ {
		c.reconcile(t, p)
		crrs := requestsOf(t, p)
		latest := getPolicy(t, p).Status.RecentDecisions[0]
		if len(crrs) != attempt || latest.Outcome != v1alpha1.OutcomeCreated || names[latest.Request] {
			t.Fatalf("attempt %d: %d requests, latest decision %+v; want request %d created under a new name", attempt, len(crrs), latest, attempt)
		}
		names[latest.Request] = true
		for i := range crrs {
			if crrs[i].Name == latest.Request {
				failed(t, c, &crrs[i], "node node-a is NotReady")
			}
		}
		if attempt == 1 {
			// Within the cooldown, held back. (The fake clock then runs
			// ahead of the API server's creation times, which the
			// cooldown counts from.)
			c.clock.Step(30 * time.Second)
			c.reconcile(t, p)
			if latest := getPolicy(t, p).Status.RecentDecisions[0]; latest.Outcome != v1alpha1.OutcomeCooldown || len(requestsOf(t, p)) != attempt {
				t.Fatalf("30 s after the first request failed: latest decision %+v, want Cooldown and no new request", latest)
			}
		}
		c.clock.Step(35 * time.Second)
	}
}
