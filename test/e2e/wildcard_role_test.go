package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1alpha1"
	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// TestWildcardRoleCannotRecreateWithoutDeleteOnPods is issue 26's
// reproduction: a service account whose Role has apps.kruise.io * * (as
// OpenKruise's and CI's roles do) and no delete on pods created a request,
// since the role grants the verb create-for-policy, and the container was
// recreated. Only the manager's identity passes without delete now: the
// request is refused in either version and the container stays. The same
// role's update-any-node no longer lets a pod of the node write a
// request's status either.
func TestWildcardRoleCannotRecreateWithoutDeleteOnPods(t *testing.T) {
	t.Parallel()
	s := rejuvStack(t)
	ctx := context.Background()
	ns := newNamespace(t)
	pod := createPod(t, ns, testappPod("wr"))
	other := createPod(t, ns, testappPod("other"))

	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ci"}}
	if _, err := kube.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kruise-everything"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"apps.kruise.io"}, Resources: []string{"*"}, Verbs: []string{"*"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}},
	}}
	if _, err := kube.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ci"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa.Name}},
	}
	if _, err := kube.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	user := "system:serviceaccount:" + ns + ":ci"
	groups := []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}

	// Premise, as kubectl auth can-i would say: the role grants every verb
	// on requests, the custom ones included, and no delete on the pod.
	for _, a := range []struct {
		verb, resource, subresource, name string
		allowed                           bool
	}{
		{"create-for-policy", "containerrecreaterequests", "", "", true},
		{"update-any-node", "containerrecreaterequests", "status", "", true},
		{"delete", "pods", "", pod.Name, false},
	} {
		group := "apps.kruise.io"
		if a.resource == "pods" {
			group = ""
		}
		err := eventually(func() error {
			sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: user, Groups: groups,
				ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: a.verb, Group: group, Resource: a.resource, Subresource: a.subresource, Namespace: ns, Name: a.name},
			}}
			got, err := kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			if got.Status.Allowed != a.allowed {
				return fmt.Errorf("%s may %s %s/%s: %t, want %t", user, a.verb, a.resource, a.subresource, got.Status.Allowed, a.allowed)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("premise: %v", err)
		}
	}

	// A token of a pod of the node, as a CI job's would be.
	ci := impersonate(t, user, groups, cluster.NodeName())
	want := `user "` + user + `" may not delete pod ` + ns + `/wr, so it may not recreate its containers`
	for _, crr := range []client.Object{newRequest(ns, "wr", pod.Name, "app"), alphaRequest(t, newRequest(ns, "wr-v1alpha1", pod.Name, "app"))} {
		if err := ci.Create(ctx, crr); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s creates request %s (%T): %v, want Forbidden with %q", user, crr.GetName(), crr, err, want)
		}
	}

	// A request someone allowed to delete the pod made: the role's holder
	// may not write its status.
	byAdmin := newRequest(ns, "by-admin", other.Name, "app")
	if err := s.Client.Create(ctx, byAdmin); err != nil {
		t.Fatal(err)
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &v1beta1.ContainerRecreateRequest{}
		if err := ci.Get(ctx, client.ObjectKeyFromObject(byAdmin), cur); err != nil {
			return err
		}
		cur.Status.Message = "written by a CI job"
		return ci.Status().Update(ctx, cur)
	})
	if want := user + " from node " + cluster.NodeName() + " may not update the status of ContainerRecreateRequest " + ns + "/by-admin"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%s writes a request's status: %v, want refused with %q", user, err, want)
	}
	waitCompleted(t, s.Client, byAdmin, 60*time.Second)

	after, err := kube.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b, a := containerStatus(pod, "app"), containerStatus(after, "app"); a.ContainerID != b.ContainerID || a.RestartCount != b.RestartCount {
		t.Errorf("container app of pod wr was recreated (%s, restartCount %d -> %s, %d)", b.ContainerID, b.RestartCount, a.ContainerID, a.RestartCount)
	}
}

// alphaRequest is crr as a v1alpha1 request, as OpenKruise's clients write.
func alphaRequest(t *testing.T, crr *v1beta1.ContainerRecreateRequest) *v1alpha1.ContainerRecreateRequest {
	t.Helper()
	out := &v1alpha1.ContainerRecreateRequest{}
	if err := out.ConvertFrom(crr); err != nil {
		t.Fatal(err)
	}
	return out
}
