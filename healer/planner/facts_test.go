package planner

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// TestCompletedChargesKeepTheLatest: a pod recreated twice within the
// budgets' timeout has two completed, charged requests; the budget holds
// the latest charge, which is the one to take back, whatever the order
// the requests are listed in.
func TestCompletedChargesKeepTheLatest(t *testing.T) {
	now := time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC)
	charged := func(name string, at time.Time) appsv1beta1.ContainerRecreateRequest {
		return appsv1beta1.ContainerRecreateRequest{
			ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{appsv1beta1.DisruptionChargedAnnotation: at.Format(time.RFC3339)},
				OwnerReferences: []metav1.OwnerReference{controllerRef("restart")}},
			Spec:   appsv1beta1.ContainerRecreateRequestSpec{PodName: "web-0"},
			Status: appsv1beta1.ContainerRecreateRequestStatus{Phase: appsv1beta1.PhaseCompleted},
		}
	}
	later, earlier := now.Add(-20*time.Second), now.Add(-80*time.Second)
	for _, order := range [][]appsv1beta1.ContainerRecreateRequest{
		{charged("second", later), charged("first", earlier)},
		{charged("first", earlier), charged("second", later)},
	} {
		f := GatherRequests(policyNamed("restart"), order, nil, now)
		if got := f.CompletedCharges["web-0"]; !got.Equal(later) {
			t.Errorf("listed %s then %s: charge to take back %s, want the latest, %s", order[0].Name, order[1].Name, got, later)
		}
	}
}

// TestLastRuleIsThatOfTheLatestRequest: the rule that made the policy's
// latest request for a container, whatever the order of the list; none
// when a run made it, and other policies' requests do not count.
func TestLastRuleIsThatOfTheLatestRequest(t *testing.T) {
	now := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	request := func(name, policy, trigger string, ago time.Duration) appsv1beta1.ContainerRecreateRequest {
		return appsv1beta1.ContainerRecreateRequest{
			ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(now.Add(-ago)), Labels: map[string]string{
				appsv1beta1.PolicyLabel: policy, appsv1beta1.TriggerLabel: trigger, appsv1beta1.PodUIDLabel: "uid-0",
			}, OwnerReferences: []metav1.OwnerReference{controllerRef(policy)}},
			Spec:   appsv1beta1.ContainerRecreateRequestSpec{PodName: "web-0", Containers: []appsv1beta1.ContainerRecreateRequestContainer{{Name: "app"}}},
			Status: appsv1beta1.ContainerRecreateRequestStatus{Phase: appsv1beta1.PhaseCompleted},
		}
	}
	key := ContainerKey{Pod: "uid-0", Container: "app"}
	for _, tc := range []struct {
		name string
		crrs []appsv1beta1.ContainerRecreateRequest
		want string
	}{
		{"the leak's, the latest", []appsv1beta1.ContainerRecreateRequest{request("a", "health", "rule.stuck", 3*time.Hour), request("b", "health", "rule.leak", time.Hour)}, "leak"},
		{"listed the other way", []appsv1beta1.ContainerRecreateRequest{request("b", "health", "rule.leak", time.Hour), request("a", "health", "rule.stuck", 3*time.Hour)}, "leak"},
		{"a run's, the latest", []appsv1beta1.ContainerRecreateRequest{request("b", "health", "rule.leak", time.Hour), request("c", "health", "schedule", time.Minute)}, ""},
		{"another policy's", []appsv1beta1.ContainerRecreateRequest{request("b", "health", "rule.leak", time.Hour), request("d", "other", "rule.stuck", time.Minute)}, "leak"},
	} {
		f := GatherRequests(policyNamed("health"), tc.crrs, nil, now)
		if got := f.LastRule[key]; got != tc.want {
			t.Errorf("%s: last rule %q, want %q", tc.name, got, tc.want)
		}
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
		f := GatherRequests(policy, []appsv1beta1.ContainerRecreateRequest{request("r", tc.owner)}, nil, now)
		key := ContainerKey{Pod: "uid-0", Container: "app"}
		if got := f.CreatedLastHour == 1 && f.Recreations[key] == 1 && len(f.Runs[run]) == 1; got != tc.own {
			t.Errorf("%s: counted as the policy's (last hour %d, recreations %d, run's pods %d), want %t", tc.name, f.CreatedLastHour, f.Recreations[key], len(f.Runs[run]), tc.own)
		}
		if _, got := f.CompletedCharges["web-0"]; got != tc.charge {
			t.Errorf("%s: charge to take back %t, want %t: only a policy's request carries one", tc.name, got, tc.charge)
		}
	}
}

// policyNamed is a policy whose UID is its name, as controllerRef names it.
func policyNamed(name string) *v1alpha1.RecreatePolicy {
	return &v1alpha1.RecreatePolicy{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name)}}
}

// controllerRef is the controller reference policyNamed(name) sets on the
// requests it creates.
func controllerRef(name string) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: "RecreatePolicy", Name: name, UID: types.UID(name), Controller: new(true)}
}
