package admission

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/rejuv-dev/rejuv/api/apps/v1alpha1"
	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// TestConversionThroughTheAPIServer writes in one version and reads in the
// other, with the conversion webhook in between.
func TestConversionThroughTheAPIServer(t *testing.T) {
	needsAPIServer(t)
	ctx := context.Background()
	ns := newNamespace(t)
	createPod(t, ns, "web", nil)

	old := &v1alpha1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "conv", Annotations: map[string]string{"rejuv.dev/reason": "test"}},
		Spec: v1alpha1.ContainerRecreateRequestSpec{
			PodName:    "web",
			Containers: []v1alpha1.ContainerRecreateRequestContainer{{Name: "app"}, {Name: "sidecar"}},
			Strategy: &v1alpha1.ContainerRecreateRequestStrategy{
				FailurePolicy: v1alpha1.FailurePolicyIgnore, OrderedRecreate: true, ForceRecreate: true,
				TerminationGracePeriodSeconds: ptr.To[int64](5), UnreadyGracePeriodSeconds: ptr.To[int64](3), MinStartedSeconds: 2,
			},
			ActiveDeadlineSeconds: ptr.To[int64](60), TTLSecondsAfterFinished: ptr.To[int32](30),
		},
	}
	if err := admin.Create(ctx, old); err != nil {
		t.Fatalf("create v1alpha1: %v", err)
	}

	hub := &v1beta1.ContainerRecreateRequest{}
	if err := admin.Get(ctx, clientKey(&v1beta1.ContainerRecreateRequest{ObjectMeta: old.ObjectMeta}), hub); err != nil {
		t.Fatalf("read as v1beta1: %v", err)
	}
	if hub.Spec.Strategy.MinStartedSeconds != 2 || !hub.Spec.Strategy.ForceRecreate || *hub.Spec.ActiveDeadlineSeconds != 60 ||
		hub.Spec.Containers[0].StatusContext == nil || hub.Annotations["rejuv.dev/reason"] != "test" {
		t.Fatalf("v1beta1 view lost fields: %+v", hub)
	}

	// The daemon's and the controller's status, written in v1beta1.
	at := metav1.NewTime(time.Now().Truncate(time.Second))
	hub.Status = v1beta1.ContainerRecreateRequestStatus{
		Phase: v1beta1.PhaseRecreating, Message: "stopping app",
		ContainerRecreateStates: []v1beta1.ContainerRecreateRequestContainerRecreateState{{Name: "app", Phase: v1beta1.PhaseRecreating, IsKilled: true}},
		ContainerStatusSnapshot: []v1beta1.ContainerRecreateRequestSyncContainerStatus{{Name: "app", Ready: false, RestartCount: 2, ContainerID: "containerd://app1"}},
		Conditions:              []metav1.Condition{{Type: v1beta1.ConditionPreRecreateGrace, Status: metav1.ConditionTrue, Reason: "PodMadeUnready", Message: "3s grace", LastTransitionTime: at}},
	}
	if err := admin.Status().Update(ctx, hub); err != nil {
		t.Fatalf("update v1beta1 status: %v", err)
	}

	seen := &v1alpha1.ContainerRecreateRequest{}
	if err := admin.Get(ctx, clientKey(hub), seen); err != nil {
		t.Fatalf("read as v1alpha1: %v", err)
	}
	if seen.Status.Phase != v1alpha1.PhaseRecreating || len(seen.Status.ContainerRecreateStates) != 1 || !seen.Status.ContainerRecreateStates[0].IsKilled {
		t.Errorf("v1alpha1 status = %+v", seen.Status)
	}
	if got := seen.Annotations[v1beta1.SyncContainerStatusesAnnotation]; got != `[{"name":"app","ready":false,"restartCount":2,"containerID":"containerd://app1"}]` {
		t.Errorf("sync-container-statuses annotation = %q", got)
	}
	if got := seen.Annotations[v1beta1.UnreadyAcquiredAnnotation]; got != at.UTC().Format(time.RFC3339) {
		t.Errorf("unready-acquired annotation = %q, want %s", got, at.UTC().Format(time.RFC3339))
	}

	// A v1alpha1 client updates the object; nothing of v1beta1 is lost.
	seen.Labels["team"] = "shop"
	if err := admin.Update(ctx, seen); err != nil {
		t.Fatalf("update through v1alpha1: %v", err)
	}
	after := &v1beta1.ContainerRecreateRequest{}
	if err := admin.Get(ctx, clientKey(hub), after); err != nil {
		t.Fatal(err)
	}
	if after.Labels["team"] != "shop" {
		t.Errorf("label written through v1alpha1 missing: %v", after.Labels)
	}
	if len(after.Status.ContainerStatusSnapshot) != 1 || len(after.Status.Conditions) != 1 || after.Status.Conditions[0].Message != "3s grace" {
		t.Errorf("v1beta1 status after a v1alpha1 update = %+v", after.Status)
	}
	for _, k := range []string{v1beta1.SyncContainerStatusesAnnotation, v1beta1.UnreadyAcquiredAnnotation, v1alpha1.ConditionsAnnotation} {
		if _, ok := after.Annotations[k]; ok {
			t.Errorf("v1beta1 object carries annotation %s, which is a field there", k)
		}
	}
}
