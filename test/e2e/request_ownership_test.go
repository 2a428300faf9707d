package e2e

import (
	"context"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// TestOnlyTheManagerMarksAPolicysRequests: on the installed stack, a
// service account that may delete only pod mine (issue 45, finding 12)
// may create a request for it, but not one labelled as a policy's, nor
// mark its own request with a policy's run afterwards: the API server
// refuses both (rejuv-request-ownership), naming the label or annotation.
func TestOnlyTheManagerMarksAPolicysRequests(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	pod := createPod(t, ns, testappPod("mine"))
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mine"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods"}, ResourceNames: []string{pod.Name}, Verbs: []string{"get", "delete"}},
			{APIGroups: []string{v1beta1.GroupVersion.Group}, Resources: []string{"containerrecreaterequests"}, Verbs: []string{"get", "create", "update", "patch"}},
		},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mine"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "mine"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "mine"}},
	}
	if _, err := kube.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	user := "system:serviceaccount:" + ns + ":mine"
	tenant := impersonate(t, user, []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}, "")

	forged := newRequest(ns, "forged", pod.Name, "app")
	forged.Labels = map[string]string{v1beta1.PolicyLabel: "nightly"}
	err := tenant.Create(ctx, forged)
	if want := user + " may not set label " + v1beta1.PolicyLabel + " of ContainerRecreateRequest " + ns + "/forged"; !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
		t.Errorf("create of a request labelled %s=nightly: %v; want Forbidden, %q", v1beta1.PolicyLabel, err, want)
	}

	// The premise: the service account may create a request for its pod.
	own := newRequest(ns, "own", pod.Name, "app")
	if err := tenant.Create(ctx, own); err != nil {
		t.Fatalf("create of an unmarked request for pod %s: %v", pod.Name, err)
	}
	patch := client.MergeFrom(own.DeepCopy())
	own.Annotations = map[string]string{v1beta1.RunAnnotation: "2026-11-29T03:00:00Z"}
	err = tenant.Patch(ctx, own, patch)
	if want := user + " may not change annotation " + v1beta1.RunAnnotation; !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
		t.Errorf("patch adding %s: %v; want Forbidden, %q", v1beta1.RunAnnotation, err, want)
	}
}
