package admission

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/rejuv-dev/rejuv/api/apps/v1alpha1"
	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// managerUser is the manager's identity as config/admission knows it, by
// its ServiceAccount as config/rbac names it before kustomize's prefix.
const managerUser = "system:serviceaccount:system:healer"

// applyAdmissionPolicies creates the ValidatingAdmissionPolicies and their
// bindings that Rejuv ships (config/admission), as they are installed,
// with the manager's ServiceAccount that some take as their parameter.
func applyAdmissionPolicies(ctx context.Context, c client.Client, root string) error {
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "system"}}); err != nil {
		return fmt.Errorf("create namespace system: %w", err)
	}
	if err := c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "system", Name: "healer"}}); err != nil {
		return fmt.Errorf("create the manager's ServiceAccount system/healer: %w", err)
	}
	files, err := filepath.Glob(filepath.Join(root, "config", "admission", "*.yaml"))
	if err != nil {
		return err
	}
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		r, err := os.Open(f)
		if err != nil {
			return err
		}
		dec := yaml.NewYAMLOrJSONDecoder(r, 4096)
		for {
			o := &unstructured.Unstructured{}
			if err := dec.Decode(&o.Object); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				r.Close()
				return fmt.Errorf("read %s: %w", f, err)
			}
			if len(o.Object) == 0 {
				continue
			}
			if err := c.Create(ctx, o); err != nil {
				r.Close()
				return fmt.Errorf("create %s %s from %s: %w", o.GetKind(), o.GetName(), f, err)
			}
		}
		r.Close()
	}
	return nil
}

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

// inV1alpha1 is crr as a v1alpha1 request.
func inV1alpha1(t *testing.T, crr *v1beta1.ContainerRecreateRequest) *v1alpha1.ContainerRecreateRequest {
	t.Helper()
	out := &v1alpha1.ContainerRecreateRequest{}
	if err := out.ConvertFrom(crr); err != nil {
		t.Fatal(err)
	}
	return out
}

var createCRRs = rbacv1.PolicyRule{APIGroups: []string{"apps.kruise.io"}, Resources: []string{"containerrecreaterequests"}, Verbs: []string{"create", "get"}}

// TestCreatingACRRNeedsTheRightToDeleteThePod: with the shipped
// request-authorization policy, a user who may create requests but not
// delete the pod is refused, a dry run too, in either version, and so is
// one whose role has apps.kruise.io * *; given delete on that pod, the
// same create is admitted, and the manager's identity passes without it.
func TestCreatingACRRNeedsTheRightToDeleteThePod(t *testing.T) {
	needsAPIServer(t)
	ctx := context.Background()
	ns := newNamespace(t)
	createPod(t, ns, "web", nil)
	createPod(t, ns, "db", nil)
	alice := userClient(t, "alice")
	grant(t, ns, "alice", "crr-creator", createCRRs)

	want := `user "alice" may not delete pod ` + ns + `/web, so it may not recreate its containers`
	// The API server loads a new admission policy within a second or so.
	var err error
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if err = alice.Create(ctx, newCRR(ns, "denied", "app"), client.DryRunAll); err != nil {
			break
		}
	}
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("dry run without delete on the pod = %v, want Forbidden with %q", err, want)
	}
	if err := alice.Create(ctx, newCRR(ns, "denied", "app")); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("create without delete on the pod = %v, want Forbidden with %q", err, want)
	}
	if err := alice.Create(ctx, inV1alpha1(t, newCRR(ns, "denied-v1alpha1", "app"))); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("create a v1alpha1 request without delete on the pod = %v, want Forbidden with %q", err, want)
	}

	grant(t, ns, "alice", "web-deleter", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"delete"}, ResourceNames: []string{"web"}})
	if err := alice.Create(ctx, newCRR(ns, "allowed", "app")); err != nil {
		t.Fatalf("create with delete on the pod: %v", err)
	}
	other := newCRR(ns, "other-pod", "app")
	other.Spec.PodName = "db"
	if err := alice.Create(ctx, other); !apierrors.IsForbidden(err) {
		t.Errorf("create for pod db with delete on pod web only = %v, want Forbidden", err)
	}

	// Every verb on requests, create-for-policy included (OpenKruise's and
	// CI's roles), and no delete on pods.
	bob := userClient(t, "bob")
	grant(t, ns, "bob", "kruise-everything", rbacv1.PolicyRule{APIGroups: []string{"apps.kruise.io"}, Resources: []string{"*"}, Verbs: []string{"*"}})
	want = `user "bob" may not delete pod ` + ns + `/web, so it may not recreate its containers`
	if err := bob.Create(ctx, newCRR(ns, "wildcard", "app")); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
		t.Errorf("create with apps.kruise.io * * and no delete on pods = %v, want Forbidden with %q", err, want)
	}

	manager := userClient(t, managerUser)
	grant(t, ns, managerUser, "manager", createCRRs)
	if err := manager.Create(ctx, newCRR(ns, "for-policy", "app")); err != nil {
		t.Errorf("the manager creates a request, with no delete on pods: %v", err)
	}
}
