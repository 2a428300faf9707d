package crr

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/rejuv-dev/rejuv/api/apps"
	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/pause"
)

// pausedCluster is a node, a running pod on it, and for each phase a
// request of that pod in it, with Rejuv paused by a ConfigMap whose
// requests key is requests.
func pausedCluster(t *testing.T, requests string, phases ...v1beta1.ContainerRecreateRequestPhase) (*Reconciler, client.Client, []*v1beta1.ContainerRecreateRequest) {
	t.Helper()
	scheme, err := apps.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "web", UID: "uid-web"},
		Spec: corev1.PodSpec{NodeName: "n", Containers: []corev1.Container{{Name: "app", Image: "img"}}}}
	stop := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "rejuv-system", Name: v1alpha1.PauseConfigMap},
		Data: map[string]string{v1alpha1.PauseReasonKey: "INC-7", v1alpha1.PauseRequestsKey: requests}}
	objs := []client.Object{node, pod, stop}
	var crrs []*v1beta1.ContainerRecreateRequest
	for i, phase := range phases {
		crr := &v1beta1.ContainerRecreateRequest{
			ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: fmt.Sprintf("r%d", i), CreationTimestamp: metav1.Now(),
				Labels: map[string]string{v1beta1.PodUIDLabel: "uid-web", v1beta1.NodeNameLabel: "n", v1beta1.ActiveLabel: "true"}},
			Spec:   v1beta1.ContainerRecreateRequestSpec{PodName: "web", Containers: []v1beta1.ContainerRecreateRequestContainer{{Name: "app"}}},
			Status: v1beta1.ContainerRecreateRequestStatus{Phase: phase},
		}
		crrs = append(crrs, crr)
		objs = append(objs, crr)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithStatusSubresource(&v1beta1.ContainerRecreateRequest{}).Build()
	r := &Reconciler{Client: c, Recorder: events.NewFakeRecorder(100), Pause: &pause.Switch{Reader: c, Namespace: "rejuv-system"}}
	r.setDefaults()
	for _, crr := range crrs {
		if err := reconcileOnce(r, client.ObjectKeyFromObject(crr)); err != nil {
			t.Fatal(err)
		}
	}
	return r, c, crrs
}

// phaseNow is the request's phase and message as stored.
func phaseNow(t *testing.T, c client.Client, crr *v1beta1.ContainerRecreateRequest) (v1beta1.ContainerRecreateRequestPhase, string) {
	t.Helper()
	got := &v1beta1.ContainerRecreateRequest{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(crr), got); err != nil {
		t.Fatal(err)
	}
	return got.Status.Phase, got.Status.Message
}

// TestAPauseEndsTheRequestsNoDaemonHasBegun: paused, a request just
// created and one queued behind another are ended, saying why; one a
// daemon has begun goes on.
func TestAPauseEndsTheRequestsNoDaemonHasBegun(t *testing.T) {
	_, c, crrs := pausedCluster(t, "", "", v1beta1.PhasePending, v1beta1.PhaseRecreating)
	for _, crr := range crrs[:2] {
		phase, msg := phaseNow(t, c, crr)
		if phase != v1beta1.PhaseCompleted || !strings.Contains(msg, `paused cluster-wide by ConfigMap rejuv-system/rejuv-pause: "INC-7"`) {
			t.Errorf("request %s: %s %q, want Completed, saying Rejuv is paused and why", crr.Name, phase, msg)
		}
	}
	if phase, _ := phaseNow(t, c, crrs[2]); phase != v1beta1.PhaseRecreating {
		t.Errorf("the request a daemon has begun is %s, want still Recreating: it finishes", phase)
	}
}

// TestAPauseThatEndsRequestsEndsThoseBegunToo: with requests: end, the
// request a daemon has begun is ended too.
func TestAPauseThatEndsRequestsEndsThoseBegunToo(t *testing.T) {
	_, c, crrs := pausedCluster(t, v1alpha1.PauseEnd, v1beta1.PhasePending, v1beta1.PhaseRecreating)
	for _, crr := range crrs {
		if phase, msg := phaseNow(t, c, crr); phase != v1beta1.PhaseCompleted || !strings.Contains(msg, "paused") {
			t.Errorf("request %s: %s %q, want Completed for the pause", crr.Name, phase, msg)
		}
	}
}

// TestRequestsGoOnOnceResumed: once the ConfigMap is gone, a new request
// is left to its daemon.
func TestRequestsGoOnOnceResumed(t *testing.T) {
	r, c, _ := pausedCluster(t, "")
	if err := c.Delete(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "rejuv-system", Name: v1alpha1.PauseConfigMap}}); err != nil {
		t.Fatal(err)
	}
	crr := &v1beta1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "after", CreationTimestamp: metav1.NewTime(time.Now()),
			Labels: map[string]string{v1beta1.PodUIDLabel: "uid-web", v1beta1.NodeNameLabel: "n", v1beta1.ActiveLabel: "true"}},
		Spec: v1beta1.ContainerRecreateRequestSpec{PodName: "web", Containers: []v1beta1.ContainerRecreateRequestContainer{{Name: "app"}}},
	}
	if err := c.Create(context.Background(), crr); err != nil {
		t.Fatal(err)
	}
	if err := reconcileOnce(r, client.ObjectKeyFromObject(crr)); err != nil {
		t.Fatal(err)
	}
	if phase, msg := phaseNow(t, c, crr); phase == v1beta1.PhaseCompleted {
		t.Errorf("a request made after resuming: %s %q, want it left to its daemon", phase, msg)
	}
}
