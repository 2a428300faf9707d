package recreatepolicy

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/planner"
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

// TestOnlyControlledRequestsCount: what the requests say of a policy's
// past (its recreations, its runs, the charges to take back) comes from
// the requests it controls alone; another object's labels and annotations
// copied onto a request change nothing.
func TestOnlyControlledRequestsCount(t *testing.T) {
	now := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
	policy := &v1alpha1.RecreatePolicy{ObjectMeta: metav1.ObjectMeta{Name: "nightly", UID: "policy-uid"}}
	run := now.Add(-time.Minute).Format(time.RFC3339)
	charged := now.Add(-30 * time.Second).Format(time.RFC3339)
	request := func(name string, owner *metav1.OwnerReference) appsv1beta1.ContainerRecreateRequest {
		crr := appsv1beta1.ContainerRecreateRequest{
			ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(now.Add(-time.Minute)),
				Labels:      map[string]string{appsv1beta1.PolicyLabel: "nightly", appsv1beta1.TriggerLabel: "schedule", appsv1beta1.PodUIDLabel: "uid-0"},
				Annotations: map[string]string{appsv1beta1.RunAnnotation: run, appsv1beta1.DisruptionChargedAnnotation: charged}},
			Spec:   appsv1beta1.ContainerRecreateRequestSpec{PodName: "web-0", Containers: []appsv1beta1.ContainerRecreateRequestContainer{{Name: "app"}}},
			Status: appsv1beta1.ContainerRecreateRequestStatus{Phase: appsv1beta1.PhaseCompleted},
		}
		if owner != nil {
			crr.OwnerReferences = []metav1.OwnerReference{*owner}
		}
		return crr
	}
	controller := func(uid types.UID, kind string, controls bool) *metav1.OwnerReference {
		return &metav1.OwnerReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: kind, Name: "nightly", UID: uid, Controller: new(controls)}
	}
	for _, tc := range []struct {
		name   string
		owner  *metav1.OwnerReference
		own    bool
		charge bool
	}{
		{"the policy's own", controller("policy-uid", "RecreatePolicy", true), true, true},
		{"labelled alone", nil, false, false},
		{"owned but not controlled", controller("policy-uid", "RecreatePolicy", false), false, false},
		{"controlled by an earlier policy of the name", controller("earlier-uid", "RecreatePolicy", true), false, true},
		{"controlled by something else", controller("policy-uid", "Deployment", true), false, false},
	} {
		f := gatherRequests(policy, []appsv1beta1.ContainerRecreateRequest{request("r", tc.owner)}, nil, now)
		key := planner.ContainerKey{Pod: "uid-0", Container: "app"}
		if got := f.createdLastHour == 1 && f.recreations[key] == 1 && len(f.runs[run]) == 1; got != tc.own {
			t.Errorf("%s: counted as the policy's (last hour %d, recreations %d, run's pods %d), want %t", tc.name, f.createdLastHour, f.recreations[key], len(f.runs[run]), tc.own)
		}
		if _, got := f.completedCharges["web-0"]; got != tc.charge {
			t.Errorf("%s: charge to take back %t, want %t: only a policy's request carries one", tc.name, got, tc.charge)
		}
	}
}
