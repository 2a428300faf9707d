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
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/rejuv-dev/rejuv/api/apps"
	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
)

// TestACompletedRequestLeavesAPodANewerRequestHolds: the sequence of the
// soak (seed 42, a request by hand made while a `kubectl rejuv restart`
// run's request on the same pod completed): the newer request has taken
// the pod out of service and not yet recorded it (PreRecreateGrace comes
// after the pod's condition). Finishing the older request must leave the
// pod out of service; it was put back, and the daemon waited for the
// kubelet to report the pod not ready until the newer request's deadline.
func TestACompletedRequestLeavesAPodANewerRequestHolds(t *testing.T) {
	scheme, err := apps.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	pod := gatedPod()
	pod.Status.Conditions = []corev1.PodCondition{{Type: PodReadyCondition, Status: corev1.ConditionFalse, Reason: reasonRecreating,
		Message: "containers are being recreated by ContainerRecreateRequest by-hand"}}
	now := metav1.Now()
	older := activeRequest("run")
	older.Status = v1beta1.ContainerRecreateRequestStatus{
		Phase: v1beta1.PhaseCompleted, CompletionTime: &now, Result: v1beta1.ResultSucceeded,
		ContainerRecreateStates: []v1beta1.ContainerRecreateRequestContainerRecreateState{{Name: "app", Phase: v1beta1.PhaseSucceeded}},
		Conditions:              []metav1.Condition{{Type: v1beta1.ConditionPreRecreateGrace, Status: metav1.ConditionTrue, Reason: reasonPodUnready, LastTransitionTime: now}},
	}
	newer := activeRequest("by-hand")
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(pod, older, newer).
		WithStatusSubresource(&v1beta1.ContainerRecreateRequest{}, &corev1.Pod{}).Build()
	r := &Reconciler{Client: c, Recorder: events.NewFakeRecorder(10)}
	r.setDefaults()
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(older)}); err != nil {
		t.Fatalf("reconcile the completed request: %v", err)
	}
	got := &v1beta1.ContainerRecreateRequest{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(older), got); err != nil {
		t.Fatal(err)
	}
	if _, active := got.Labels[v1beta1.ActiveLabel]; active {
		t.Fatalf("the completed request was not retired (labels %v): the premise of this test does not hold", got.Labels)
	}
	cur := &corev1.Pod{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(pod), cur); err != nil {
		t.Fatal(err)
	}
	if cond := pods.Condition(cur, PodReadyCondition); cond == nil || cond.Status != corev1.ConditionFalse {
		t.Errorf("pod's %s after the older request completed: %+v; want it left False for by-hand", PodReadyCondition, cond)
	}
}

// TestAPodPutBackInServiceUnderItsRequestIsTakenOutAgain: a pod whose
// request has taken it out (PreRecreateGrace) and that some writer put
// back in service (one that missed the request) is taken out again while
// the request runs, so the daemon's wait for the kubelet ends.
func TestAPodPutBackInServiceUnderItsRequestIsTakenOutAgain(t *testing.T) {
	needsAPIServer(t)
	t.Parallel()
	pod := createPod(t, newNamespace(t), readyNode(t), true)
	waitPodReady(t, pod, corev1.ConditionTrue)
	crr := createCRR(t, pod, "held", func(s *v1beta1.ContainerRecreateRequestSpec) {
		s.Strategy = &v1beta1.ContainerRecreateRequestStrategy{UnreadyGracePeriodSeconds: ptr.To[int64](30)}
	}, nil)
	waitCRR(t, crr, 10*time.Second, "holding the pod unready", func(c *v1beta1.ContainerRecreateRequest) bool {
		return meta.IsStatusConditionTrue(c.Status.Conditions, v1beta1.ConditionPreRecreateGrace)
	})
	waitPodReady(t, pod, corev1.ConditionFalse)

	cur := &corev1.Pod{}
	if err := admin.Get(context.Background(), client.ObjectKeyFromObject(pod), cur); err != nil {
		t.Fatal(err)
	}
	if err := setPodReady(context.Background(), admin, cur, corev1.ConditionTrue, reasonReleased, ""); err != nil {
		t.Fatalf("put the pod back in service as a stale writer would: %v", err)
	}
	if s := podReadyStatus(t, pod); s != corev1.ConditionTrue {
		t.Fatalf("pod's %s is %q after the stale writer's patch, want True: the premise of this test does not hold", PodReadyCondition, s)
	}
	waitPodReady(t, pod, corev1.ConditionFalse)
	if got := waitCRR(t, crr, time.Second, "still running", func(*v1beta1.ContainerRecreateRequest) bool { return true }); completed(got) {
		t.Errorf("request completed (%+v); want it running, holding the pod", got.Status)
	}
}
