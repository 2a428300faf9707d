package recreatepolicy

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/planner"
)

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
