package admission

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// userClient is a client authenticated as a user with no rights but those
// granted to it in the test.
func userClient(t *testing.T, name string) client.Client {
	t.Helper()
	u, err := env.AddUser(envtest.User{Name: name}, restCfg)
	if err != nil {
		t.Fatalf("add user %s: %v", name, err)
	}
	c, err := client.New(u.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func grant(t *testing.T, ns, user, name string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	ctx := context.Background()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: rules}
	if err := admin.Create(ctx, role); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	if err := admin.Create(ctx, binding); err != nil {
		t.Fatal(err)
	}
}

var createCRRs = rbacv1.PolicyRule{APIGroups: []string{"apps.kruise.io"}, Resources: []string{"containerrecreaterequests"}, Verbs: []string{"create", "get"}}

func TestCreatingACRRNeedsTheRightToDeleteThePod(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	createPod(t, ns, "web", nil)
	alice := userClient(t, "alice")
	grant(t, ns, "alice", "crr-creator", createCRRs)

	err := alice.Create(context.Background(), newCRR(ns, "denied", "app"))
	if !apierrors.IsForbidden(err) {
		t.Fatalf("create without pods/delete = %v, want Forbidden", err)
	}
	want := `user "alice" may not delete pod ` + ns + `/web, so it may not recreate its containers`
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q\nlacks %q", err, want)
	}

	grant(t, ns, "alice", "pod-deleter", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"delete"}})
	if err := alice.Create(context.Background(), newCRR(ns, "allowed", "app")); err != nil {
		t.Fatalf("create with pods/delete: %v", err)
	}
}

// TestAuthorizationCanBeTurnedOff calls the validator the way the API
// server does, as a user without pods/delete, with the check turned off.
func TestAuthorizationCanBeTurnedOff(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	createPod(t, ns, "web", nil)
	crr := newCRR(ns, "unchecked", "app")
	crr.Spec.Containers[0].StatusContext = nil
	raw, err := json.Marshal(crr)
	if err != nil {
		t.Fatal(err)
	}
	req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		Operation: admissionv1.Create, Namespace: ns, Name: crr.Name,
		UserInfo: authenticationv1.UserInfo{Username: "bob"},
		Object:   runtime.RawExtension{Raw: raw},
	}}
	decoder := admission.NewDecoder(scheme)
	off := &CRRMutator{Reader: admin, Decoder: decoder}
	if resp := off.Handle(context.Background(), req); !resp.Allowed {
		t.Fatalf("with the check off: denied: %v", resp.Result)
	}
	on := &CRRMutator{Reader: admin, Decoder: decoder, Authorizer: &DisruptionAuthorizer{Client: admin}}
	if resp := on.Handle(context.Background(), req); resp.Allowed {
		t.Fatal("with the check on: bob was allowed without pods/delete")
	}
}
