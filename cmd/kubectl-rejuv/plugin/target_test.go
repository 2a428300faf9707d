package plugin

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// TestWorkloadTargets: each kind of workload gives its selector, an owner
// reference for its restart policy, and its own maxUnavailable, or the
// default its controller would use.
func TestWorkloadTargets(t *testing.T) {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	two := intstr.FromInt32(2)
	meta := metav1.ObjectMeta{Name: "web", UID: "uid-1"}
	for _, tc := range []struct {
		kind string
		obj  client.Object
		want string
	}{
		{"deployment", &appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{Selector: sel}}, "25%"},
		{"deployment", &appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{Selector: sel,
			Strategy: appsv1.DeploymentStrategy{RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: &two}}}}, "2"},
		{"statefulset", &appsv1.StatefulSet{ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{Selector: sel}}, "1"},
		{"daemonset", &appsv1.DaemonSet{ObjectMeta: meta, Spec: appsv1.DaemonSetSpec{Selector: sel,
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: &two}}}}, "2"},
		{"replicaset", &appsv1.ReplicaSet{ObjectMeta: meta, Spec: appsv1.ReplicaSetSpec{Selector: sel}}, "25%"},
	} {
		tg := &target{kind: tc.kind, name: "web"}
		tg.workload(tc.obj)
		if tg.selector != sel || tg.maxUnavailable == nil || tg.maxUnavailable.String() != tc.want {
			t.Errorf("%s: selector %v maxUnavailable %v, want %s", tc.kind, tg.selector, tg.maxUnavailable, tc.want)
		}
		if o := tg.owner; o == nil || o.APIVersion != "apps/v1" || o.Kind != kindNames[tc.kind] || o.Name != "web" || o.UID != "uid-1" || o.Controller != nil {
			t.Errorf("%s: owner %+v", tc.kind, tg.owner)
		}
		if got := tg.restartPolicyName(); got != "restart-"+tc.kind+"-web" {
			t.Errorf("%s: policy %s", tc.kind, got)
		}
	}
}

// TestRestartPolicyNames: a name too long for a label value is cut and
// made unique with a hash of the whole; a selector's policy is named by
// a hash of the selector.
func TestRestartPolicyNames(t *testing.T) {
	long := &target{kind: "deployment", name: strings.Repeat("checkout-", 8)}
	other := &target{kind: "deployment", name: strings.Repeat("checkout-", 8) + "x"}
	a, b := long.restartPolicyName(), other.restartPolicyName()
	if len(a) > 63 || len(b) > 63 || a == b || !strings.HasPrefix(a, "restart-deployment-checkout-") {
		t.Errorf("names %q and %q: want distinct, at most 63 characters", a, b)
	}
	s1 := &target{kind: "selector", selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "cache"}}}
	s2 := &target{kind: "selector", selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}
	if n1, n2 := s1.restartPolicyName(), s2.restartPolicyName(); n1 == n2 || !strings.HasPrefix(n1, "restart-selector-") || n1 != s1.restartPolicyName() {
		t.Errorf("selector names %q and %q: want distinct and stable", n1, n2)
	}
	if s1.String() != "pods with app=cache" {
		t.Errorf("selector target %q", s1.String())
	}
}

// TestZeroBudget: a workload that allows no unavailable pod.
func TestZeroBudget(t *testing.T) {
	for v, want := range map[string]bool{"0": true, "0%": true, "1": false, "25%": false} {
		x := intstr.Parse(v)
		if zeroBudget(&x) != want {
			t.Errorf("zeroBudget(%s) = %v", v, !want)
		}
	}
}

// TestClockAhead reads how far this machine's clock runs ahead of the API
// server's from the time the server recorded for the write.
func TestClockAhead(t *testing.T) {
	at := now
	p := &v1alpha1.RecreatePolicy{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{
		{Manager: "other", Time: new(metav1.NewTime(at.Add(-time.Hour)))},
		{Manager: "kubectl-rejuv", Time: new(metav1.NewTime(at.Add(-30 * time.Second)))},
	}}}
	if got := clockAhead(p, "kubectl-rejuv", at); got != 30*time.Second {
		t.Errorf("ahead %v, want 30s", got)
	}
	if got := clockAhead(p, "kubectl-rejuv", at.Add(-time.Minute)); got != 0 {
		t.Errorf("behind: %v, want 0", got)
	}
}
