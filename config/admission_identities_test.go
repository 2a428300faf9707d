package config

import (
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
)

// managerAccount is the manager's ServiceAccount as config/rbac names it,
// the parameter of the policies that know the manager.
var managerAccount = &corev1.ServiceAccount{
	TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
	ObjectMeta: metav1.ObjectMeta{Namespace: "system", Name: "healer"},
}

// serviceAccount is the user of a token of a service account.
func serviceAccount(namespace, name, node string) user.Info {
	u := &user.DefaultInfo{
		Name:   "system:serviceaccount:" + namespace + ":" + name,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
	}
	if node != "" {
		u.Extra = map[string][]string{"authentication.kubernetes.io/node-name": {node}}
	}
	return u
}

// wildcard is what a Role with apps.kruise.io * * (OpenKruise's, CI's)
// lets its holder do to requests: every verb, custom ones included.
var wildcard = []string{
	"create containerrecreaterequests", "update containerrecreaterequests", "create-for-policy containerrecreaterequests",
	"update containerrecreaterequests/status", "update-any-node containerrecreaterequests/status",
}

// TestPoliciesKnowTheManagerByItsServiceAccount: the policies that let the
// manager through take its identity from its ServiceAccount, the
// binding's parameter, which kustomize and Helm rename and move along
// with it (checkReferences checks the renderings); nobody passes when it
// is missing. They match requests of every version, as the API server
// serves both.
func TestPoliciesKnowTheManagerByItsServiceAccount(t *testing.T) {
	for _, name := range []string{"request-authorization", "request-ownership", "daemon-scope"} {
		p := shippedPolicies(t)[name]
		if p == nil {
			t.Fatalf("config/admission has no policy %s", name)
		}
		if k := p.policy.Spec.ParamKind; k == nil || k.APIVersion != "v1" || k.Kind != "ServiceAccount" {
			t.Errorf("%s: paramKind %+v, want v1 ServiceAccount", name, k)
		}
		ref := p.binding.Spec.ParamRef
		if ref == nil || ref.Name != managerAccount.Name || ref.Namespace != managerAccount.Namespace ||
			ref.ParameterNotFoundAction == nil || *ref.ParameterNotFoundAction != admissionregistrationv1.DenyAction {
			t.Errorf("%s: binding's paramRef %+v, want ServiceAccount %s/%s (config/rbac) and Deny when it is missing", name, ref, managerAccount.Namespace, managerAccount.Name)
		}
		if mp := p.policy.Spec.MatchConstraints.MatchPolicy; mp != nil && *mp != admissionregistrationv1.Equivalent {
			t.Errorf("%s: matchPolicy %s, want Equivalent", name, *mp)
		}
		for _, r := range p.policy.Spec.MatchConstraints.ResourceRules {
			if !slices.Equal(r.APIVersions, []string{"*"}) {
				t.Errorf("%s: matches versions %v of %v, want every version", name, r.APIVersions, r.Resources)
			}
		}
	}
}

// TestRequestAuthorizationHonoursTheManagersIdentityOnly: creating a
// request needs delete on the pod; the manager, which may not delete
// pods, passes by its identity. A role with apps.kruise.io * * grants
// every verb there, create-for-policy of old included, and no longer lets
// its holder past; nor does a service account named like the manager's
// in another namespace.
func TestRequestAuthorizationHonoursTheManagersIdentityOnly(t *testing.T) {
	p := shippedPolicies(t)["request-authorization"]
	for _, version := range []string{"v1alpha1", "v1beta1"} {
		create := func(w write) write {
			w.operation, w.object = admission.Create, crr(version, "web-x", nil)
			return w
		}
		for _, tt := range []struct {
			name string
			w    write
			want string
		}{
			{"a service account with apps.kruise.io * *", create(write{user: serviceAccount("shop", "ci", ""), allowed: wildcard}),
				`user "system:serviceaccount:shop:ci" may not delete pod shop/web, so it may not recreate its containers`},
			{"a user with every verb on requests and delete on no pod", create(write{user: person("alice"), allowed: append(slices.Clone(wildcard), "delete deployments")}),
				`user "alice" may not delete pod shop/web, so it may not recreate its containers`},
			{"a service account named like the manager's in another namespace", create(write{user: serviceAccount("shop", "healer", "")}),
				`user "system:serviceaccount:shop:healer" may not delete pod shop/web`},
			{"a user who may delete the pod", create(write{user: person("alice"), allowed: []string{"delete pods"}}), ""},
			{"the manager, which may not delete pods", create(write{user: serviceAccount("system", "healer", "node-b")}), ""},
		} {
			got := judge(t, p, tt.w, managerAccount)
			if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
				t.Errorf("%s: %s creates a request: %q, want %q", version, tt.name, got, tt.want)
			}
		}
	}
}

// TestDaemonScopeHoldsForIdentitiesOnly: a request's status is written by
// the daemon of its node (a token of Rejuv's namespace bound to that
// node), by the manager from anywhere, or by system:masters. A role with
// apps.kruise.io * * grants update-any-node, which once let its holder
// write any node's requests, and any pod of the node carries a token of
// the node: neither passes now.
func TestDaemonScopeHoldsForIdentitiesOnly(t *testing.T) {
	p := shippedPolicies(t)["daemon-scope"]
	for _, version := range []string{"v1alpha1", "v1beta1"} {
		status := func(w write) write {
			old := crr(version, "web-x", nil)
			updated := old.DeepCopy()
			_ = unstructured.SetNestedField(updated.Object, "Recreating", "status", "phase")
			w.operation, w.subresource, w.object, w.old = admission.Update, "status", updated, old
			return w
		}
		const reason = ", which belongs to node node-a: only that node's daemon may, or Rejuv's manager (healer of namespace system)"
		for _, tt := range []struct {
			name string
			w    write
			want string
		}{
			{"the daemon of the node", status(write{user: serviceAccount("system", "daemon", "node-a"), allowed: []string{"update containerrecreaterequests/status"}}), ""},
			{"the manager", status(write{user: serviceAccount("system", "healer", "")}), ""},
			{"system:masters", status(write{user: person("admin", "system:masters"), allowed: []string{"*"}}), ""},
			{"the daemon of another node", status(write{user: serviceAccount("system", "daemon", "node-b")}),
				"system:serviceaccount:system:daemon from node node-b may not update the status of ContainerRecreateRequest shop/web-x" + reason},
			{"a daemon token bound to no node", status(write{user: serviceAccount("system", "daemon", "")}),
				"system:serviceaccount:system:daemon (a token not bound to a node) may not update"},
			{"a service account with apps.kruise.io * *, bound to no node", status(write{user: serviceAccount("shop", "ci", ""), allowed: wildcard}),
				"system:serviceaccount:shop:ci (a token not bound to a node) may not update the status of ContainerRecreateRequest shop/web-x" + reason},
			{"a pod of the node whose service account has apps.kruise.io * *", status(write{user: serviceAccount("shop", "ci", "node-a"), allowed: wildcard}),
				"system:serviceaccount:shop:ci from node node-a may not update"},
			{"a cluster administrator by role, not system:masters", status(write{user: person("root"), allowed: []string{"*"}}),
				"root (a token not bound to a node) may not update"},
		} {
			got := judge(t, p, tt.w, managerAccount)
			if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
				t.Errorf("%s: %s writes a request's status: %q, want %q", version, tt.name, got, tt.want)
			}
		}
	}
}
