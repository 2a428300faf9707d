package admission

import (
	"context"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1alpha1"
	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// TestAnEditorCannotWriteTheStatusThroughAnnotations: the API server keeps
// a v1alpha1 object's status on a write of the main resource, not the
// annotations that carry part of it in v1alpha1, and stores the object
// converted to v1beta1. An editor (who may patch requests, not their
// status) once made the stored preStopStartedAt 2000-01-01 this way, and
// the daemon skipped the preStop hook and killed the container. In
// v1alpha1 the write is refused; in v1beta1 the annotation is an ordinary
// one, which no later v1alpha1 write turns into status.
func TestAnEditorCannotWriteTheStatusThroughAnnotations(t *testing.T) {
	needsAPIServer(t)
	ctx := context.Background()
	ns := newNamespace(t)
	createPod(t, ns, "web", nil)
	crr := newCRR(ns, "forged", "app")
	if err := admin.Create(ctx, crr); err != nil {
		t.Fatal(err)
	}
	// The daemon has taken the request up and not started the hook yet.
	crr.Status = v1beta1.ContainerRecreateRequestStatus{
		Phase:                   v1beta1.PhaseRecreating,
		ContainerRecreateStates: []v1beta1.ContainerRecreateRequestContainerRecreateState{{Name: "app", Phase: v1beta1.PhaseRecreating}},
	}
	if err := admin.Status().Update(ctx, crr); err != nil {
		t.Fatal(err)
	}
	want := crr.Status.DeepCopy()

	editor := userClient(t, "editor")
	grant(t, ns, "editor", "requests-editor", rbacv1.PolicyRule{APIGroups: []string{"apps.kruise.io"}, Resources: []string{"containerrecreaterequests"}, Verbs: []string{"get", "create", "update", "patch"}},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"delete"}})
	forged := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"rejuv.dev/prestop-started":"{\"app\":\"2000-01-01T00:00:00Z\"}"}}}`))
	alpha := &v1alpha1.ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: crr.Name}}

	refusal := "editor may not change rejuv.dev/prestop-started of v1alpha1 ContainerRecreateRequest " + ns + "/forged"
	// The API server loads a new admission policy within a second or so.
	var err error
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if err = editor.Patch(ctx, alpha.DeepCopy(), forged, client.DryRunAll); err != nil {
			break
		}
	}
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), refusal) {
		t.Fatalf("v1alpha1 patch of rejuv.dev/prestop-started (dry run) = %v, want Forbidden with %q", err, refusal)
	}
	if err := editor.Patch(ctx, alpha.DeepCopy(), forged); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), refusal) {
		t.Errorf("v1alpha1 patch of rejuv.dev/prestop-started = %v, want Forbidden with %q", err, refusal)
	}
	stored := func(what string) {
		t.Helper()
		got := &v1beta1.ContainerRecreateRequest{}
		if err := admin.Get(ctx, clientKey(crr), got); err != nil {
			t.Fatal(err)
		}
		if !equalStatus(&got.Status, want) {
			t.Errorf("after %s, stored status = %+v, want it unchanged %+v", what, got.Status, *want)
		}
	}
	stored("the refused v1alpha1 patch")

	if err := editor.Patch(ctx, &v1beta1.ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: crr.Name}}, forged); err != nil {
		t.Fatalf("v1beta1 patch of an ordinary annotation: %v", err)
	}
	stored("the annotation written in v1beta1")
	seen := &v1alpha1.ContainerRecreateRequest{}
	if err := editor.Get(ctx, clientKey(crr), seen); err != nil {
		t.Fatal(err)
	}
	if v, ok := seen.Annotations["rejuv.dev/prestop-started"]; ok {
		t.Errorf("v1alpha1 shows the v1beta1 annotation as status: rejuv.dev/prestop-started=%s", v)
	}
	label := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"team":"shop"}}}`))
	if err := editor.Patch(ctx, alpha.DeepCopy(), label); err != nil {
		t.Fatalf("v1alpha1 patch of a label: %v", err)
	}
	stored("a v1alpha1 write after the annotation written in v1beta1")

	created := inV1alpha1(t, newCRR(ns, "created-done", "app"))
	created.Annotations = map[string]string{"rejuv.dev/result": "Succeeded"}
	if err := editor.Create(ctx, created); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "editor may not set rejuv.dev/result of v1alpha1 ContainerRecreateRequest") {
		t.Errorf("v1alpha1 create with rejuv.dev/result = %v, want Forbidden", err)
	}
}

// equalStatus compares what the daemon reads of a status.
func equalStatus(got, want *v1beta1.ContainerRecreateRequestStatus) bool {
	if got.Phase != want.Phase || got.Result != want.Result || len(got.Conditions) != len(want.Conditions) ||
		len(got.ContainerStatusSnapshot) != len(want.ContainerStatusSnapshot) || len(got.ContainerRecreateStates) != len(want.ContainerRecreateStates) {
		return false
	}
	for i, s := range got.ContainerRecreateStates {
		w := want.ContainerRecreateStates[i]
		if s.Name != w.Name || s.Phase != w.Phase || (s.PreStopStartedAt == nil) != (w.PreStopStartedAt == nil) {
			return false
		}
	}
	return true
}
