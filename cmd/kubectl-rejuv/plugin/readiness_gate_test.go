package plugin

import (
	"bytes"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPodsWithoutTheReadinessGateAreWarnedOf(t *testing.T) {
	pod := func(name string, gated bool) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if gated {
			p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "KruisePodReady"}}
		}
		return p
	}
	deployment := &target{kind: "deployment", name: "web", owner: &metav1.OwnerReference{Kind: "Deployment", Name: "web"}}
	for _, tc := range []struct {
		name  string
		t     *target
		pods  []corev1.Pod
		grace int64
		want  string
	}{
		{"all gated", deployment, []corev1.Pod{pod("a", true), pod("b", true)}, 5, ""},
		{"no grace asked", deployment, []corev1.Pod{pod("a", false)}, 0, ""},
		{"a workload", deployment, []corev1.Pod{pod("a", false), pod("b", true), pod("c", false)}, 5,
			"warning: 2 of the 3 pods (a, c) have no readiness gate KruisePodReady: Rejuv cannot take them out of their Services before stopping containers, and clients may see requests fail. " +
				"A pod gets the gate when it is created while a RecreatePolicy selects it, or in a namespace labelled rejuv.dev/readiness-gate=enabled; kubectl rollout restart deployment/web gives them the gate.\n"},
		{"a pod", &target{kind: "pod", name: "a"}, []corev1.Pod{pod("a", false)}, 5,
			"warning: pod a has no readiness gate KruisePodReady: Rejuv cannot take it out of its Services before stopping containers, and clients may see requests fail. " +
				"A pod gets the gate when it is created while a RecreatePolicy selects it, or in a namespace labelled rejuv.dev/readiness-gate=enabled; recreating it gives it the gate.\n"},
	} {
		var out bytes.Buffer
		warnUngated(&out, tc.t, tc.pods, tc.grace)
		if out.String() != tc.want {
			t.Errorf("%s: warned\n%q\nwant\n%q", tc.name, out.String(), tc.want)
		}
	}
}
