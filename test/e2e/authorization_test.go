package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/test/deploy"
)

// The identities the install ships, as the API server sees their tokens.
var (
	managerUser = "system:serviceaccount:" + deploy.Namespace + ":rejuv-healer"
	daemonUser  = "system:serviceaccount:" + deploy.Namespace + ":rejuv-daemon"
	saGroups    = []string{"system:serviceaccounts", "system:serviceaccounts:" + deploy.Namespace, "system:authenticated"}
)

// nodeNameExtra is where the API server puts, for a pod's token, the name
// of the pod's node.
const nodeNameExtra = "authentication.kubernetes.io/node-name"

// act is one action an identity may or may not take.
type act struct {
	verb, group, resource, subresource, namespace, name string
	allowed                                             bool
}

func (a act) String() string {
	r := a.resource
	if a.group != "" {
		r += "." + a.group
	}
	if a.subresource != "" {
		r += "/" + a.subresource
	}
	where := "cluster-wide"
	if a.namespace != "" {
		where = "in " + a.namespace
	}
	if a.name != "" {
		r += " " + a.name
	}
	return fmt.Sprintf("%s %s %s", a.verb, r, where)
}

// identityActs are, for each shipped service account, what it may do
// (what its code needs) and what of the same kind it may not.
func identityActs() []struct {
	user string
	acts []act
} {
	const ns = deploy.Namespace
	return []struct {
		user string
		acts []act
	}{
		{managerUser, []act{
			{"list", "", "pods", "", "", "", true},
			{"watch", "", "nodes", "", "", "", true},
			{"watch", "policy", "poddisruptionbudgets", "", "", "", true},
			{"watch", "rejuv.dev", "recreatepolicies", "", "", "", true},
			{"update", "rejuv.dev", "recreatepolicies", "status", "shop", "web", true},
			{"list", "metrics.k8s.io", "pods", "", "", "", true},
			{"watch", "apps.kruise.io", "containerrecreaterequests", "", "", "", true},
			{"create", "apps.kruise.io", "containerrecreaterequests", "", "shop", "", true},
			{"update", "apps.kruise.io", "containerrecreaterequests", "status", "shop", "web-1", true},
			{"patch", "", "pods", "status", "shop", "web-1", true},
			{"update", "policy", "poddisruptionbudgets", "status", "shop", "web", true},
			{"create", "events.k8s.io", "events", "", "shop", "", true},
			{"get", "", "secrets", "", ns, "rejuv-webhook-certs", true},
			{"create", "", "secrets", "", ns, "", true},
			{"get", "coordination.k8s.io", "leases", "", ns, "rejuv-healer.rejuv.dev", true},
			{"watch", "", "configmaps", "", ns, "", true},
			{"patch", "", "configmaps", "", ns, "rejuv-pause", true},
			{"update", "admissionregistration.k8s.io", "mutatingwebhookconfigurations", "", "", "rejuv-mutating-webhook-configuration", true},
			{"update", "admissionregistration.k8s.io", "validatingwebhookconfigurations", "", "", "rejuv-validating-webhook-configuration", true},
			{"update", "apiextensions.k8s.io", "customresourcedefinitions", "", "", "containerrecreaterequests.apps.kruise.io", true},
			{"create", "authorization.k8s.io", "subjectaccessreviews", "", "", "", true},
			{"create", "authentication.k8s.io", "tokenreviews", "", "", "", true},
			// Refused: reach beyond its own namespace and objects, and
			// disruption it may only cause through a policy. The
			// admission policies know it by its identity, not by a verb
			// that any role with apps.kruise.io * * would grant too.
			{"delete", "", "pods", "", "shop", "web-1", false},
			{"create-for-policy", "apps.kruise.io", "containerrecreaterequests", "", "shop", "", false},
			{"update-any-node", "apps.kruise.io", "containerrecreaterequests", "status", "shop", "web-1", false},
			{"create", "", "pods", "", "shop", "", false},
			{"get", "", "secrets", "", "kube-system", "any", false},
			{"list", "", "secrets", "", "", "", false},
			{"get", "coordination.k8s.io", "leases", "", "kube-system", "kube-controller-manager", false},
			{"update", "coordination.k8s.io", "leases", "", ns, "another-lease", false},
			{"list", "", "configmaps", "", "", "", false},
			{"get", "", "configmaps", "", "kube-system", "any", false},
			{"patch", "", "configmaps", "", ns, "another-configmap", false},
			{"create", "", "configmaps", "", ns, "", false},
			{"update", "admissionregistration.k8s.io", "mutatingwebhookconfigurations", "", "", "someone-elses-webhook", false},
			{"create", "admissionregistration.k8s.io", "mutatingwebhookconfigurations", "", "", "", false},
			{"create", "admissionregistration.k8s.io", "validatingadmissionpolicies", "", "", "", false},
			{"update", "admissionregistration.k8s.io", "validatingadmissionpolicies", "", "", "rejuv-daemon-scope", false},
			{"update", "apiextensions.k8s.io", "customresourcedefinitions", "", "", "recreatepolicies.rejuv.dev", false},
			{"update", "rejuv.dev", "recreatepolicies", "", "shop", "web", false},
			{"update", "policy", "poddisruptionbudgets", "", "shop", "web", false},
			{"get", "metrics.k8s.io", "nodes", "", "", "", false},
		}},
		{daemonUser, []act{
			{"list", "", "pods", "", "", "", true},
			{"watch", "apps.kruise.io", "containerrecreaterequests", "", "", "", true},
			{"update", "apps.kruise.io", "containerrecreaterequests", "status", "shop", "web-1", true},
			{"create", "events.k8s.io", "events", "", "shop", "", true},
			{"create", "authentication.k8s.io", "tokenreviews", "", "", "", true},
			// Refused: everything but executing its node's requests.
			{"update-any-node", "apps.kruise.io", "containerrecreaterequests", "status", "shop", "web-1", false},
			{"update", "apps.kruise.io", "containerrecreaterequests", "", "shop", "web-1", false},
			{"create", "apps.kruise.io", "containerrecreaterequests", "", "shop", "", false},
			{"create-for-policy", "apps.kruise.io", "containerrecreaterequests", "", "shop", "", false},
			{"delete", "", "pods", "", "shop", "web-1", false},
			{"patch", "", "pods", "status", "shop", "web-1", false},
			{"get", "", "secrets", "", ns, "rejuv-webhook-certs", false},
			{"update", "", "nodes", "", "", cluster.NodeName(), false},
			{"list", "rejuv.dev", "recreatepolicies", "", "", "", false},
		}},
	}
}

// TestShippedRolesGrantOnlyWhatTheCodeUses asks the API server, for each
// shipped service account, whether it may take each action: what the code
// needs is allowed, the rest of the same kind refused.
func TestShippedRolesGrantOnlyWhatTheCodeUses(t *testing.T) {
	t.Parallel()
	for _, tt := range identityActs() {
		for _, a := range tt.acts {
			sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: tt.user, Groups: saGroups,
				ResourceAttributes: &authorizationv1.ResourceAttributes{
					Verb: a.verb, Group: a.group, Resource: a.resource, Subresource: a.subresource, Namespace: a.namespace, Name: a.name,
				},
			}}
			got, err := kube.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), sar, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Status.Allowed != a.allowed {
				t.Errorf("%s: %s allowed=%t, want %t (%s)", tt.user, a, got.Status.Allowed, a.allowed, got.Status.Reason)
			}
		}
	}
	reader := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: "system:serviceaccount:monitoring:prometheus", Groups: []string{"system:authenticated"},
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Verb: "get", Path: "/metrics"},
	}}
	got, err := kube.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), reader, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.Allowed {
		t.Errorf("an unbound scraper may get /metrics: %s", got.Status.Reason)
	}
}

// impersonate returns a client acting as user with groups and, when node
// is set, a token bound to that node.
func impersonate(t *testing.T, user string, groups []string, node string) client.Client {
	t.Helper()
	cfg := rest.CopyConfig(restCfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	if node != "" {
		cfg.Impersonate.Extra = map[string][]string{nodeNameExtra: {node}}
	}
	c, err := client.New(cfg, client.Options{Scheme: rejuvStack(t).Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestDaemonTokenWritesOnlyItsNodesRequests: the API server itself (the
// shipped daemon-scope admission policy) keeps a daemon's token to the
// status of its own node's requests; the manager may write any node's.
func TestDaemonTokenWritesOnlyItsNodesRequests(t *testing.T) {
	t.Parallel()
	s := rejuvStack(t)
	ctx := context.Background()
	ns := newNamespace(t)
	pod := createPod(t, ns, testappPod("web"))
	crr := newRequest(ns, "scoped", pod.Name, "app")
	if err := s.Client.Create(ctx, crr); err != nil {
		t.Fatal(err)
	}
	// The node's daemon writes the status too: a write from a stale read
	// is retried.
	write := func(c client.Client) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur := &v1beta1.ContainerRecreateRequest{}
			if err := s.Client.Get(ctx, client.ObjectKeyFromObject(crr), cur); err != nil {
				return err
			}
			cur.Status.Message = "written by the test"
			return c.Status().Update(ctx, cur)
		})
	}
	node := pod.Spec.NodeName
	err := write(impersonate(t, daemonUser, saGroups, "node-b"))
	want := daemonUser + " from node node-b may not update the status of ContainerRecreateRequest " + ns + "/scoped, which belongs to node " + node
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("the daemon of another node: %v, want refused with %q", err, want)
	}
	if err := write(impersonate(t, daemonUser, saGroups, "")); err == nil || !strings.Contains(err.Error(), "(a token not bound to a node) may not update") {
		t.Errorf("a daemon token bound to no node: %v, want refused", err)
	}
	for _, who := range []struct {
		user, node string
	}{{daemonUser, node}, {managerUser, "node-b"}, {managerUser, ""}} {
		if err := write(impersonate(t, who.user, saGroups, who.node)); err != nil {
			t.Errorf("%s with a token of node %q: %v, want allowed", who.user, who.node, err)
		}
	}
}

// grant gives user a namespaced role with rules and returns a function
// that takes it back.
func grant(t *testing.T, ns, user string, rules ...rbacv1.PolicyRule) func() {
	t.Helper()
	ctx := context.Background()
	name := fmt.Sprintf("e2e-%d", time.Now().UnixNano())
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: rules}
	if _, err := kube.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	if _, err := kube.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return func() {
		_ = kube.RbacV1().RoleBindings(ns).Delete(context.Background(), name, metav1.DeleteOptions{})
		_ = kube.RbacV1().Roles(ns).Delete(context.Background(), name, metav1.DeleteOptions{})
	}
}

// eventually retries fn for a few seconds: a new role binding reaches the
// API server's authorizer within a moment.
func eventually(fn func() error) error {
	var err error
	for range 50 {
		if err = fn(); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

// TestPolicyAndRequestNeedDeleteOnPods: a user who may edit policies and
// requests but not delete pods may neither create a policy, nor change its
// spec, nor create a request; given delete on pods, the same user may.
func TestPolicyAndRequestNeedDeleteOnPods(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	pod := createPod(t, ns, testappPod("web"))
	const user = "alice"
	grant(t, ns, user,
		rbacv1.PolicyRule{APIGroups: []string{"rejuv.dev"}, Resources: []string{"recreatepolicies"}, Verbs: []string{"get", "create", "update", "patch"}},
		rbacv1.PolicyRule{APIGroups: []string{"apps.kruise.io"}, Resources: []string{"containerrecreaterequests"}, Verbs: []string{"get", "create"}},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}})
	alice := impersonate(t, user, []string{"system:authenticated"}, "")

	policy := &v1alpha1.RecreatePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nightly"},
		Spec: v1alpha1.RecreatePolicySpec{
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "none"}},
			Schedule: &v1alpha1.Schedule{Cron: "0 3 1 1 *"},
		},
	}
	err := eventually(func() error { return alice.Create(ctx, policy.DeepCopy()) })
	want := "alice may not delete pods in namespace " + ns + ", so it may not create RecreatePolicy nightly"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("create a policy without delete on pods: %v, want refused with %q", err, want)
	}
	err = alice.Create(ctx, newRequest(ns, "by-hand", pod.Name, "app"))
	if want := `user "alice" may not delete pod ` + ns + "/web, so it may not recreate its containers"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("create a request without delete on the pod: %v, want refused with %q", err, want)
	}

	revoke := grant(t, ns, user, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"delete"}})
	if err := eventually(func() error { return alice.Create(ctx, policy.DeepCopy()) }); err != nil {
		t.Fatalf("create a policy with delete on pods: %v", err)
	}
	revoke()

	cur := &v1alpha1.RecreatePolicy{}
	err = eventually(func() error {
		if err := alice.Get(ctx, client.ObjectKeyFromObject(policy), cur); err != nil {
			return err
		}
		changed := cur.DeepCopy()
		changed.Spec.Selector.MatchLabels["app"] = "web"
		if err := alice.Update(ctx, changed); err == nil {
			return fmt.Errorf("the update was allowed")
		} else if !strings.Contains(err.Error(), "so it may not change the spec of RecreatePolicy nightly") {
			return err
		}
		return nil
	})
	if err != nil {
		t.Errorf("change a policy's selector after delete on pods was revoked: %v, want refused", err)
	}
	labelled := cur.DeepCopy()
	labelled.Labels = map[string]string{"team": "shop"}
	if err := alice.Update(ctx, labelled); err != nil {
		t.Errorf("label a policy (its spec unchanged) without delete on pods: %v, want allowed", err)
	}
}

// TestManagerRequestsNeedTheirPolicy: the manager may not delete pods; the
// webhook accepts a request from it only when the RecreatePolicy that
// controls the request exists and selects the pod.
func TestManagerRequestsNeedTheirPolicy(t *testing.T) {
	t.Parallel()
	s := rejuvStack(t)
	ctx := context.Background()
	ns := newNamespace(t)
	p := testappPod("web")
	p.Labels = map[string]string{"app": "web"}
	pod := createPod(t, ns, p)
	policy := func(name, app string) *v1alpha1.RecreatePolicy {
		rp := &v1alpha1.RecreatePolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: v1alpha1.RecreatePolicySpec{
				Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
				Schedule: &v1alpha1.Schedule{Cron: "0 3 1 1 *"},
				Suspend:  true,
			},
		}
		if err := s.Client.Create(ctx, rp); err != nil {
			t.Fatal(err)
		}
		return rp
	}
	selecting, other := policy("selects-web", "web"), policy("selects-api", "api")
	owned := func(name string, rp *v1alpha1.RecreatePolicy) *v1beta1.ContainerRecreateRequest {
		crr := newRequest(ns, name, pod.Name, "app")
		if rp != nil {
			crr.OwnerReferences = []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "RecreatePolicy", Name: rp.Name, UID: rp.UID, Controller: new(true)}}
		}
		return crr
	}
	manager := impersonate(t, managerUser, saGroups, cluster.NodeName())
	for _, tt := range []struct {
		crr  *v1beta1.ContainerRecreateRequest
		want string
	}{
		{owned("no-policy", nil), "the manager creates ContainerRecreateRequests only for a RecreatePolicy that controls them"},
		{owned("other-policy", other), "RecreatePolicy " + ns + "/selects-api does not select pod web"},
	} {
		if err := manager.Create(ctx, tt.crr); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("the manager creates %s: %v, want refused with %q", tt.crr.Name, err, tt.want)
		}
	}
	stale := owned("stale-uid", selecting)
	stale.OwnerReferences[0].UID = "00000000-0000-0000-0000-000000000000"
	if err := manager.Create(ctx, stale); err == nil || !strings.Contains(err.Error(), "is not the one (UID 00000000-0000-0000-0000-000000000000)") {
		t.Errorf("the manager creates a request for a policy's former UID: %v, want refused", err)
	}
	if err := manager.Create(ctx, owned("by-policy", selecting)); err != nil {
		t.Errorf("the manager creates a request for the policy that selects the pod: %v", err)
	}
}

// TestManagerTokenChangesOnlyTheReadinessGate: the manager's token may
// patch every pod's status (for the readiness gate); the API server itself
// (the shipped manager-pod-status admission policy, which must compile
// against this Kubernetes' pods to hold at all) lets it change the
// KruisePodReady condition and refuses the rest: a label, which would move
// the pod into a policy's selector or out of a Service, the pod's Ready
// condition, its phase.
func TestManagerTokenChangesOnlyTheReadinessGate(t *testing.T) {
	t.Parallel()
	s := rejuvStack(t)
	ctx := context.Background()
	ns := newNamespace(t)
	pod := createPod(t, ns, testappPod("web"))
	manager := impersonate(t, managerUser, saGroups, "")
	patch := func(c client.Client, change func(*corev1.Pod)) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur := &corev1.Pod{}
			if err := s.Client.Get(ctx, client.ObjectKeyFromObject(pod), cur); err != nil {
				return err
			}
			base := cur.DeepCopy()
			change(cur)
			return c.Status().Patch(ctx, cur, client.StrategicMergeFrom(base, client.MergeFromWithOptimisticLock{}))
		})
	}
	gate := func(status corev1.ConditionStatus) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Status.Conditions = slices.DeleteFunc(p.Status.Conditions, func(c corev1.PodCondition) bool { return c.Type == "KruisePodReady" })
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: "KruisePodReady", Status: status, Reason: "Test", LastTransitionTime: metav1.Now()})
		}
	}
	if err := patch(manager, gate(corev1.ConditionFalse)); err != nil {
		t.Errorf("the manager sets KruisePodReady: %v", err)
	}
	const refusal = "may change only the KruisePodReady condition of pod "
	for _, tt := range []struct {
		name   string
		change func(*corev1.Pod)
	}{
		{"relabels the pod", func(p *corev1.Pod) { p.Labels = map[string]string{"app": "elsewhere"} }},
		{"sets the pod's Ready condition", func(p *corev1.Pod) {
			for i := range p.Status.Conditions {
				if p.Status.Conditions[i].Type == corev1.PodReady {
					p.Status.Conditions[i].Status = corev1.ConditionFalse
				}
			}
		}},
		{"fails the pod", func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }},
	} {
		err := patch(manager, tt.change)
		if err == nil || !strings.Contains(err.Error(), refusal+ns+"/web") {
			t.Errorf("the manager %s: %v, want refused with %q", tt.name, err, refusal)
		}
	}
	// The cluster's administrator is not the policy's concern.
	if err := patch(s.Client, gate(corev1.ConditionTrue)); err != nil {
		t.Errorf("an administrator sets KruisePodReady: %v", err)
	}
	got := &corev1.Pod{}
	if err := s.Client.Get(ctx, client.ObjectKeyFromObject(pod), got); err != nil {
		t.Fatal(err)
	}
	if got.Labels["app"] == "elsewhere" || got.Status.Phase == corev1.PodFailed {
		t.Errorf("the pod was changed: labels %v, phase %s", got.Labels, got.Status.Phase)
	}
}
