package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1alpha1"
	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// TestWebhooksAdmitAndConvertThroughTheirService: the installed manager's
// webhooks, reached by the API server through their Service, fill in a
// request from the live pod, reject a bad one, and convert between
// versions.
func TestWebhooksAdmitAndConvertThroughTheirService(t *testing.T) {
	t.Parallel()
	c := rejuvStack(t).Client
	ctx := context.Background()
	ns := newNamespace(t)
	pod := createPod(t, ns, testappPod("web"))
	app := containerStatus(pod, "app")

	crr := &v1beta1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "restart-app"},
		Spec:       v1beta1.ContainerRecreateRequestSpec{PodName: pod.Name, Containers: []v1beta1.ContainerRecreateRequestContainer{{Name: "app"}}},
	}
	if err := c.Create(ctx, crr); err != nil {
		t.Fatalf("create ContainerRecreateRequest: %v", err)
	}
	sc := crr.Spec.Containers[0].StatusContext
	if sc == nil || sc.ContainerID != app.ContainerID || sc.RestartCount != app.RestartCount {
		t.Errorf("statusContext = %+v, want the live container %s restartCount %d", sc, app.ContainerID, app.RestartCount)
	}
	if crr.Labels[v1beta1.NodeNameLabel] != pod.Spec.NodeName || crr.Labels[v1beta1.PodUIDLabel] != string(pod.UID) || crr.Labels[v1beta1.PodNameLabel] != pod.Name {
		t.Errorf("labels = %v, want node %s, pod UID %s and pod name %s", crr.Labels, pod.Spec.NodeName, pod.UID, pod.Name)
	}

	bad := &v1beta1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad"},
		Spec:       v1beta1.ContainerRecreateRequestSpec{PodName: pod.Name, Containers: []v1beta1.ContainerRecreateRequestContainer{{Name: "nope"}}},
	}
	err := c.Create(ctx, bad)
	if err == nil || !strings.Contains(err.Error(), `spec.containers[0].name: Invalid value: "nope": pod web has no container of that name`) {
		t.Errorf("bad request: %v", err)
	}

	old := &v1alpha1.ContainerRecreateRequest{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(crr), old); err != nil {
		t.Fatalf("read through the conversion webhook as v1alpha1: %v", err)
	}
	if old.Spec.Containers[0].StatusContext == nil || old.Spec.Containers[0].StatusContext.ContainerID != app.ContainerID {
		t.Errorf("v1alpha1 view = %+v", old.Spec)
	}
	if got, _ := waitCompleted(t, c, crr, 60*time.Second); got.Status.Result != v1beta1.ResultSucceeded {
		t.Errorf("result %q: %+v", got.Status.Result, got.Status.ContainerRecreateStates)
	}
}
