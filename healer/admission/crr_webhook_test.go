package admission

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

func TestCreateInjectsFromThePod(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	pod := createPod(t, ns, "web", nil)

	crr := newCRR(ns, "ok", "app", "sidecar")
	crr.Annotations = map[string]string{v1beta1.RequestedAtAnnotation: "2020-01-01T00:00:00Z"}
	before := time.Now()
	if err := admin.Create(context.Background(), crr); err != nil {
		t.Fatalf("create: %v", err)
	}
	after := time.Now()
	got := &v1beta1.ContainerRecreateRequest{}
	if err := admin.Get(context.Background(), clientKey(crr), got); err != nil {
		t.Fatal(err)
	}
	wantLabels := map[string]string{v1beta1.PodUIDLabel: string(pod.UID), v1beta1.PodNameLabel: pod.Name, v1beta1.NodeNameLabel: testNode, v1beta1.ActiveLabel: "true"}
	for k, v := range wantLabels {
		if got.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, got.Labels[k], v)
		}
	}
	// The admission time is the webhook's, to the nanosecond, whatever the
	// user wrote.
	if at, err := time.Parse(time.RFC3339Nano, got.Annotations[v1beta1.RequestedAtAnnotation]); err != nil || at.Before(before) || at.After(after) {
		t.Errorf("annotation %s = %q (%v), want the admission's time, between %s and %s", v1beta1.RequestedAtAnnotation,
			got.Annotations[v1beta1.RequestedAtAnnotation], err, before.Format(time.RFC3339Nano), after.Format(time.RFC3339Nano))
	}
	app, side := got.Spec.Containers[0], got.Spec.Containers[1]
	if sc := app.StatusContext; sc == nil || sc.ContainerID != "containerd://app1" || sc.RestartCount != 2 {
		t.Errorf("app statusContext = %+v, want containerd://app1 restartCount 2", sc)
	}
	if sc := side.StatusContext; sc == nil || sc.ContainerID != "containerd://side1" || sc.RestartCount != 0 {
		t.Errorf("sidecar statusContext = %+v, want containerd://side1 restartCount 0", sc)
	}
	if app.PreStop == nil || app.PreStop.Exec == nil || strings.Join(app.PreStop.Exec.Command, " ") != "sh -c drain" {
		t.Errorf("app preStop = %+v, want the pod's exec hook", app.PreStop)
	}
	if len(app.Ports) != 1 || app.Ports[0].Name != "http" || app.Ports[0].ContainerPort != 8080 {
		t.Errorf("app ports = %+v, want the pod's http 8080", app.Ports)
	}
	if side.PreStop != nil || side.Ports != nil {
		t.Errorf("sidecar got preStop %+v ports %+v, want none (the pod has none)", side.PreStop, side.Ports)
	}
	s := got.Spec.Strategy
	if s == nil || s.FailurePolicy != v1beta1.FailurePolicyFail {
		t.Errorf("strategy = %+v, want failurePolicy Fail", s)
	}
	if s == nil || s.TerminationGracePeriodSeconds == nil || *s.TerminationGracePeriodSeconds != 17 {
		t.Errorf("strategy = %+v, want terminationGracePeriodSeconds 17 from the pod", s)
	}
}

func TestUserStrategyIsKept(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	createPod(t, ns, "web", nil)
	crr := newCRR(ns, "kept", "app")
	crr.Spec.Strategy = &v1beta1.ContainerRecreateRequestStrategy{FailurePolicy: v1beta1.FailurePolicyIgnore, TerminationGracePeriodSeconds: ptr.To[int64](0)}
	if err := admin.Create(context.Background(), crr); err != nil {
		t.Fatal(err)
	}
	if s := crr.Spec.Strategy; s.FailurePolicy != v1beta1.FailurePolicyIgnore || *s.TerminationGracePeriodSeconds != 0 {
		t.Errorf("strategy = %+v, want the user's Ignore and 0", s)
	}
}

func TestUpdateKeepsSpecAndRoutingLabels(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	createPod(t, ns, "web", nil)
	crr := newCRR(ns, "immutable", "app")
	if err := admin.Create(context.Background(), crr); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		change func(*v1beta1.ContainerRecreateRequest)
		want   string // empty: the update is allowed
	}{
		{"spec", func(c *v1beta1.ContainerRecreateRequest) { c.Spec.Strategy.MinStartedSeconds = 9 }, "spec: Forbidden: is immutable"},
		{"pod-uid label", func(c *v1beta1.ContainerRecreateRequest) { c.Labels[v1beta1.PodUIDLabel] = "other" }, "metadata.labels[crr.apps.kruise.io/pod-uid]: Forbidden"},
		{"pod-name label", func(c *v1beta1.ContainerRecreateRequest) { c.Labels[v1beta1.PodNameLabel] = "other" }, "metadata.labels[crr.apps.kruise.io/pod-name]: Forbidden"},
		{"node-name label", func(c *v1beta1.ContainerRecreateRequest) { delete(c.Labels, v1beta1.NodeNameLabel) }, "metadata.labels[crr.apps.kruise.io/node-name]: Forbidden"},
		{"other label", func(c *v1beta1.ContainerRecreateRequest) { c.Labels["team"] = "shop" }, ""},
		{"requested-at annotation", func(c *v1beta1.ContainerRecreateRequest) {
			c.Annotations[v1beta1.RequestedAtAnnotation] = time.Now().UTC().Format(time.RFC3339Nano)
		}, "metadata.annotations[rejuv.dev/requested-at]: Forbidden: is set when the request is created and is immutable"},
		{"active label removed", func(c *v1beta1.ContainerRecreateRequest) { delete(c.Labels, v1beta1.ActiveLabel) }, ""},
		{"active label back", func(c *v1beta1.ContainerRecreateRequest) { c.Labels[v1beta1.ActiveLabel] = "true" }, "cannot be set again once the request has completed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cur := &v1beta1.ContainerRecreateRequest{}
			if err := admin.Get(context.Background(), clientKey(crr), cur); err != nil {
				t.Fatal(err)
			}
			tt.change(cur)
			err := admin.Update(context.Background(), cur)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("update rejected: %v", err)
			case tt.want != "" && err == nil:
				t.Fatal("update accepted")
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Fatalf("error %q\nlacks %q", err, tt.want)
			}
		})
	}
}

func TestDeleteIsAlwaysAllowed(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	createPod(t, ns, "web", nil)
	crr := newCRR(ns, "gone", "app")
	if err := admin.Create(context.Background(), crr); err != nil {
		t.Fatal(err)
	}
	if err := admin.Delete(context.Background(), crr); err != nil {
		t.Fatalf("delete: %v", err)
	}
}

// TestAPodNameTooLongForALabelGetsNoPodNameLabel: the pod-name label holds
// the pod's name where a label value can (63 characters); a longer name
// gets no label, not a refusal of its request, and a label the user wrote
// that would name another pod is dropped.
func TestAPodNameTooLongForALabelGetsNoPodNameLabel(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	long := strings.Repeat("a", 64)
	createPod(t, ns, long, nil)
	crr := newCRR(ns, "long", "app")
	crr.Spec.PodName = long
	crr.Labels = map[string]string{v1beta1.PodNameLabel: "web"}
	if err := admin.Create(context.Background(), crr); err != nil {
		t.Fatalf("create a request for a pod whose name is 64 characters: %v", err)
	}
	if v, ok := crr.Labels[v1beta1.PodNameLabel]; ok {
		t.Errorf("label %s = %q; want none for a name longer than a label value", v1beta1.PodNameLabel, v)
	}
}
