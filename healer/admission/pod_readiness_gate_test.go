package admission

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestReadinessGateIsInjectedOnlyInOptedInNamespaces(t *testing.T) {
	needsAPIServer(t)
	ctx := context.Background()
	optedIn := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "gate-", Labels: map[string]string{ReadinessGateNamespaceLabel: "enabled"}}}
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
}
