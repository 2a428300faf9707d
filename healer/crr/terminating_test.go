package crr

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/rejuv-dev/rejuv/api/apps"
	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// TestTerminatingPodEndsRequestAtOnce: a request whose pod has a
// deletionTimestamp ends in the same pass, Failed with "pod is being
// deleted", whatever the daemon has done so far: the kubelet is stopping
// the pod and would not start a stopped container again.
func TestTerminatingPodEndsRequestAtOnce(t *testing.T) {
	scheme, err := apps.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	deleting := metav1.Now()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "uid-web", DeletionTimestamp: &deleting, Finalizers: []string{"test/hold"}},
		Spec:       corev1.PodSpec{NodeName: "n", Containers: []corev1.Container{{Name: "app"}, {Name: "sidecar"}}},
	}
	crr := &v1beta1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "r", CreationTimestamp: metav1.Now(), Labels: map[string]string{
			v1beta1.PodUIDLabel: "uid-web", v1beta1.NodeNameLabel: "n", v1beta1.ActiveLabel: "true",
		}},
		Spec: v1beta1.ContainerRecreateRequestSpec{PodName: "web", Containers: []v1beta1.ContainerRecreateRequestContainer{{Name: "app"}, {Name: "sidecar"}}},
		// app's container was recreated before the deletion; sidecar's
		// waits for the unready grace.
		Status: v1beta1.ContainerRecreateRequestStatus{Phase: v1beta1.PhaseRecreating, ContainerRecreateStates: []v1beta1.ContainerRecreateRequestContainerRecreateState{
			{Name: "app", Phase: v1beta1.PhaseSucceeded, IsKilled: true}, {Name: "sidecar", Phase: v1beta1.PhaseRecreating},
		}},
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(node, pod, crr).WithStatusSubresource(crr).Build()
	r := &Reconciler{Client: c, Recorder: events.NewFakeRecorder(10)}
	r.setDefaults()
	if err := reconcileOnce(r, client.ObjectKeyFromObject(crr)); err != nil {
		t.Fatal(err)
	}
	got := &v1beta1.ContainerRecreateRequest{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(crr), got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != v1beta1.PhaseCompleted || got.Status.Message != "pod is being deleted" || got.Status.Result != v1beta1.ResultPartiallySucceeded {
		t.Fatalf("status %s %q result %s; want Completed, PartiallySucceeded, for the pod being deleted", got.Status.Phase, got.Status.Message, got.Status.Result)
	}
	app, side := got.Status.ContainerRecreateStates[0], got.Status.ContainerRecreateStates[1]
	if app.Phase != v1beta1.PhaseSucceeded {
		t.Errorf("app = %+v, want its Succeeded kept", app)
	}
	if side.Phase != v1beta1.PhaseFailed || side.Message != "not recreated: pod is being deleted" {
		t.Errorf("sidecar = %+v, want Failed for the pod being deleted", side)
	}
}

// TestPodDeletedWithAGracePeriodEndsRequest deletes a pod gracefully while
// its request holds it out of service for the unready grace: the pod stays,
// terminating, and the request ends Failed at once rather than at the end
// of the grace, when the daemon would stop a container of a pod the
// kubelet is stopping.
func TestPodDeletedWithAGracePeriodEndsRequest(t *testing.T) {
	needsAPIServer(t)
	t.Parallel()
	ctx := context.Background()
	pod := createPod(t, newNamespace(t), readyNode(t), true)
	waitPodReady(t, pod, corev1.ConditionTrue)
	crr := createCRR(t, pod, "terminating", func(s *v1beta1.ContainerRecreateRequestSpec) {
		s.Strategy = &v1beta1.ContainerRecreateRequestStrategy{UnreadyGracePeriodSeconds: ptr.To[int64](20)}
	}, recreating(v1beta1.PhasePending, v1beta1.PhasePending))
	waitCRR(t, crr, 10*time.Second, "holding the pod unready", func(c *v1beta1.ContainerRecreateRequest) bool {
		return meta.IsStatusConditionTrue(c.Status.Conditions, v1beta1.ConditionPreRecreateGrace)
	})
	// A pod on a node is deleted gracefully: it stays, with a
	// deletionTimestamp, until its kubelet (none here) confirms.
	if err := admin.Delete(ctx, pod, client.GracePeriodSeconds(30)); err != nil {
		t.Fatal(err)
	}
	got := waitCRR(t, crr, 10*time.Second, "ended for the pod's deletion", retired)
	if got.Status.Message != "pod is being deleted" || got.Status.Result != v1beta1.ResultFailed {
		t.Errorf("message %q result %s, want Failed for the pod being deleted", got.Status.Message, got.Status.Result)
	}
	for _, s := range got.Status.ContainerRecreateStates {
		if s.Phase != v1beta1.PhaseFailed || s.IsKilled {
			t.Errorf("container %+v, want Failed and never stopped", s)
		}
	}
	cur := &corev1.Pod{}
	if err := admin.Get(ctx, client.ObjectKeyFromObject(pod), cur); err != nil || cur.DeletionTimestamp == nil {
		t.Errorf("premise: the pod is still there, terminating (%v)", err)
	}
	waitEvent(t, pod.Namespace, "ContainerRecreateRequest", crr.Name, "Warning RecreateCompleted: completed: Failed: pod is being deleted")
}
