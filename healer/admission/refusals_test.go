package admission

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/test/refusals"
)

// refusalPods are the pods refusals.Requests name: web (see podSpec), and
// pods unscheduled, finished, of a job, whose container app has its own
// restartPolicy Never, being deleted, with a grace period over the bound,
// and with a preStop over the bound.
func refusalPods(t *testing.T, ns string) {
	t.Helper()
	createPod(t, ns, "web", nil)
	createPod(t, ns, "unscheduled", func(p *corev1.Pod) { p.Spec.NodeName = "" })
	createPod(t, ns, "done", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded })
	createPod(t, ns, "job", func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyOnFailure })
	createPod(t, ns, "solo", func(p *corev1.Pod) { p.Spec.Containers[0].RestartPolicy = new(corev1.ContainerRestartPolicyNever) })
	createPod(t, ns, "patient", func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = new(int64(100000)) })
	createPod(t, ns, "verbose", func(p *corev1.Pod) {
		p.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", strings.Repeat("#", 5000)}}}}
	})
	leaving := createPod(t, ns, "leaving", func(p *corev1.Pod) { p.Finalizers = []string{"test.rejuv.dev/hold"} })
	if err := admin.Delete(context.Background(), leaving); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = admin.Patch(context.Background(), leaving, client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`)))
	})
}

// TestEveryRefusal creates every refusal of docs/validation.md on the real
// API server, with Rejuv's CRDs and webhooks, and checks the cause it
// returns.
func TestEveryRefusal(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	refusalPods(t, ns)
	run := func(kind string, rows []refusals.Refusal, create func(i int, r refusals.Refusal) error) {
		for i, r := range rows {
			t.Run(kind+"/"+r.Input, func(t *testing.T) {
				err := create(i, r)
				var se *apierrors.StatusError
				if !errors.As(err, &se) || !apierrors.IsInvalid(err) {
					t.Fatalf("got %v, want Invalid", err)
				}
				if !hasCause(err, r.Field, r.Message) {
					t.Errorf("got %v\nwant a cause on %s containing %q", err, r.Field, r.Message)
				}
				// A webhook's refusal says so; the API server's own checks
				// (schema, CEL) come before the validating webhooks.
				byWebhook := strings.Contains(err.Error(), "admission webhook")
				if want := r.Stage == refusals.StageWebhook || r.Stage == refusals.StageCompile; byWebhook != want {
					t.Errorf("refused at stage %q, but by a webhook: %v (%v)", r.Stage, byWebhook, err)
				}
			})
		}
	}
	run("RecreatePolicy", refusals.Policies, func(i int, r refusals.Refusal) error {
		name := r.Name
		if name == "" {
			name = fmt.Sprintf("p-%d", i)
		}
		return createPolicy(context.Background(), admin, ns, name, r.Spec)
	})
	run("ContainerRecreateRequest", refusals.Requests, func(i int, r refusals.Refusal) error {
		return createRequest(context.Background(), ns, fmt.Sprintf("r-%d", i), r.Spec)
	})
}

// createRequest creates a ContainerRecreateRequest from YAML (its spec),
// as kubectl apply would send it.
func createRequest(ctx context.Context, ns, name, spec string) error {
	return createFromYAML(ctx, admin, v1beta1.GroupVersion.WithKind("ContainerRecreateRequest"), ns, name, spec)
}
