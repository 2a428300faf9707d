package e2e

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// overflowingSeconds is past the longest time.Duration in seconds
// (9,223,372,036): as a duration it wraps to a short or negative one.
const overflowingSeconds = int64(9_300_000_000)

// refusePastBounds has c, an editor of ns, create what issue 45's
// findings 5 and 7 and the preStop bound of finding 2 are made of:
// durations that overflow, rules that compile past the per-policy bound,
// and a request copying a preStop of 5,000 bytes. Requests are for pod
// plain of ns, but the last. Each must be refused naming its field and
// its bound; it returns the refusals.
func refusePastBounds(t *testing.T, c client.Client, ns, plain string) []string {
	t.Helper()
	ctx := context.Background()
	loud := testappPod("loud")
	loud.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{
		Command: []string{"sh", "-c", "true # " + strings.Repeat("x", 5000)}}}}
	loud = createPod(t, ns, loud)

	longGrace := newRequest(ns, "long-grace", plain, "app")
	longGrace.Spec.Strategy = &v1beta1.ContainerRecreateRequestStrategy{TerminationGracePeriodSeconds: new(overflowingSeconds)}
	longDeadline := newRequest(ns, "long-deadline", plain, "app")
	longDeadline.Spec.ActiveDeadlineSeconds = new(overflowingSeconds)
	longUnready := builtinPolicy(ns, "long-unready", "loud", "max-age", nil)
	longUnready.Spec.Recreate.Strategy = &v1beta1.ContainerRecreateRequestStrategy{UnreadyGracePeriodSeconds: new(overflowingSeconds)}
	// 30,000 numbers in 60 KB of Rego, within a rule's 64 KiB, are a term
	// every two bytes.
	table := builtinPolicy(ns, "table", "loud", "max-age", nil)
	table.Spec.Rules = []v1alpha1.Rule{{Name: "table", Rego: "package custom\nimport rego.v1\ntable := [" + strings.Repeat("1,", 29_999) + "1]\n" +
		"recreate contains c.name if {\n\tsome c in input.containers\n\tcount(table) < 0\n}\n"}}

	var refusals []string
	for _, tt := range []struct {
		what string
		obj  client.Object
		want []string
	}{
		{"a request whose termination grace overflows a duration", longGrace, []string{"spec.strategy.terminationGracePeriodSeconds", "86400"}},
		{"a request whose deadline overflows a duration", longDeadline, []string{"spec.activeDeadlineSeconds", "604800"}},
		{"a policy whose unready grace overflows a duration", longUnready, []string{"spec.recreate.strategy.unreadyGracePeriodSeconds", "86400"}},
		{"a policy whose rule would keep 15 MiB compiled", table, []string{"spec.rules[0].rego", "over the bound of 8 MiB per policy"}},
		{"a request copying a preStop of 5,000 bytes", newRequest(ns, "loud", loud.Name, "app"), []string{"spec.containers[0].preStop", "more than the 4096 a request copies"}},
	} {
		err := c.Create(ctx, tt.obj)
		if err == nil {
			t.Errorf("%s was admitted, want it refused naming %q", tt.what, tt.want)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v; want %q in the refusal", tt.what, err, w)
			}
		}
		refusals = append(refusals, "refused: "+err.Error())
	}
	return refusals
}
