package recreatepolicy

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// TestForgedLabelDoesNotSpendThePolicysLimits: a tenant who may recreate
// only their own pod creates two requests for it labelled with a policy's
// name (issue 45, finding 12). The policy, over other pods, must not count
// them as its own: its maxPerHour of 2 still lets it recreate its pod.
func TestForgedLabelDoesNotSpendThePolicysLimits(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	theirs := createPods(t, ns, "web", 1, c.clock.Now().Add(-time.Hour))
	mine := createPods(t, ns, "mine", 1, c.clock.Now().Add(-time.Hour))[0]
	spec := rulePolicy("web", annotated)
	spec.Limits.MaxPerHour = new(int32(2))
	p := createPolicy(t, ns, "hourly", spec)
	for _, name := range []string{"forged-1", "forged-2"} {
		forged := &appsv1beta1.ContainerRecreateRequest{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{
				appsv1beta1.PolicyLabel: p.Name, appsv1beta1.TriggerLabel: "rule.asked",
			}},
			Spec: appsv1beta1.ContainerRecreateRequestSpec{PodName: mine.Name, Containers: []appsv1beta1.ContainerRecreateRequestContainer{{Name: "app"}}},
		}
		if err := admin.Create(context.Background(), forged); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(requestsOf(t, p)); n != 2 {
		t.Fatalf("premise: %d requests labelled %s=%s, want the 2 forged ones", n, appsv1beta1.PolicyLabel, p.Name)
	}

	annotate(t, theirs[0])
	c.reconcile(t, p)
	var created int
	for _, crr := range requestsOf(t, p) {
		if metav1.IsControlledBy(&crr, p) {
			created++
		}
	}
	if created != 1 {
		t.Errorf("the policy created %d requests for its matching pod, want 1; decisions: %+v", created, getPolicy(t, p).Status.RecentDecisions)
	}
	if decided(t, p, v1alpha1.OutcomeRateLimited) {
		t.Errorf("the policy was rate limited by requests it did not create: %+v", getPolicy(t, p).Status.RecentDecisions)
	}
	// The next pass counts what is in flight.
	c.clock.Step(time.Second)
	c.reconcile(t, p)
	if got := getPolicy(t, p).Status.ActiveRecreations; got != 1 {
		t.Errorf("status.activeRecreations %d, want 1: only the policy's own request", got)
	}
}
