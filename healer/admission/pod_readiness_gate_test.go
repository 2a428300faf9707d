package admission

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

func TestReadinessGateIsInjectedInOptedInNamespacesAndForPolicies(t *testing.T) {
	needsAPIServer(t)
	ctx := context.Background()
	optedIn := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "gate-", Labels: map[string]string{v1beta1.ReadinessGateNamespaceLabel: "enabled"}}}
	if err := admin.Create(ctx, optedIn); err != nil {
		t.Fatal(err)
	}
	plain := newNamespace(t)

	gates := func(ns string, preset ...corev1.PodReadinessGate) []corev1.PodReadinessGate {
		t.Helper()
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "p-"},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "img"}}, ReadinessGates: preset},
		}
		if err := admin.Create(ctx, pod); err != nil {
			t.Fatalf("create pod in %s: %v", ns, err)
		}
		return pod.Spec.ReadinessGates
	}
	if g := gates(optedIn.Name); len(g) != 1 || g[0].ConditionType != "KruisePodReady" {
		t.Errorf("opted-in namespace: readinessGates = %+v, want KruisePodReady", g)
	}
	if g := gates(plain); len(g) != 0 {
		t.Errorf("plain namespace: readinessGates = %+v, want none", g)
	}
	if g := gates(optedIn.Name, corev1.PodReadinessGate{ConditionType: "KruisePodReady"}); len(g) != 1 {
		t.Errorf("a pod that already has the gate got it twice: %+v", g)
	}

	// Elsewhere, a pod gets the gate when a policy of its namespace
	// selects it, unless its namespace opted out.
	optedOut := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "nogate-", Labels: map[string]string{v1beta1.ReadinessGateNamespaceLabel: "disabled"}}}
	if err := admin.Create(ctx, optedOut); err != nil {
		t.Fatal(err)
	}
	labelled := func(ns string, l map[string]string) []corev1.PodReadinessGate {
		t.Helper()
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "p-", Labels: l},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "img"}}},
		}
		if err := admin.Create(ctx, pod); err != nil {
			t.Fatalf("create pod in %s: %v", ns, err)
		}
		return pod.Spec.ReadinessGates
	}
	for _, ns := range []string{plain, optedOut.Name} {
		p := &v1alpha1.RecreatePolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nightly"},
			Spec: v1alpha1.RecreatePolicySpec{
				Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				Schedule: &v1alpha1.Schedule{Cron: "0 3 * * *"},
			},
		}
		if err := admin.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if g := labelled(plain, map[string]string{"app": "web"}); len(g) != 1 || g[0].ConditionType != "KruisePodReady" {
		t.Errorf("a pod a policy selects: readinessGates = %+v, want KruisePodReady", g)
	}
	if g := labelled(plain, map[string]string{"app": "db"}); len(g) != 0 {
		t.Errorf("a pod no policy selects got readinessGates %+v", g)
	}
	if g := labelled(optedOut.Name, map[string]string{"app": "web"}); len(g) != 0 {
		t.Errorf("a pod of an opted-out namespace got readinessGates %+v", g)
	}
}
