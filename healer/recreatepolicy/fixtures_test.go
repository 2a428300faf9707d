package recreatepolicy

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/policy"
)

func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "rp-"}}
	if err := admin.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// testReconciler is a Reconciler on a fake clock.
type testReconciler struct {
	*Reconciler
	clock    *clocktesting.FakeClock
	recorder *events.FakeRecorder
}

func newController(t *testing.T, deadline time.Duration) *testReconciler {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Now().Truncate(time.Second))
	rec := events.NewFakeRecorder(1000)
	return &testReconciler{
		Reconciler: &Reconciler{Client: admin, Reader: admin, Clock: clk, Recorder: rec,
			Engine: policy.NewEngine(policy.Options{Deadline: deadline})},
		clock: clk, recorder: rec,
	}
}

func (c *testReconciler) reconcile(t *testing.T, p *v1alpha1.RecreatePolicy) ctrl.Result {
	t.Helper()
	res, err := c.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: p.Namespace, Name: p.Name}})
	if err != nil {
		t.Fatalf("reconcile %s/%s: %v", p.Namespace, p.Name, err)
	}
	return res
}

// createPods creates n running, ready pods labelled app=name, their app
// container started at started.
func createPods(t *testing.T, ns, name string, n int, started time.Time) []*corev1.Pod {
	t.Helper()
	var pods []*corev1.Pod
	for i := range n {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s-%d", name, i), Labels: map[string]string{"app": name}},
			Spec:       corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{{Name: "app", Image: "img"}}},
		}
		if err := admin.Create(context.Background(), pod); err != nil {
			t.Fatal(err)
		}
		setPodStatus(t, pod, true, "containerd://"+pod.Name+"-1", 0, started)
		pods = append(pods, pod)
	}
	return pods
}

// setPodStatus plays the kubelet.
func setPodStatus(t *testing.T, pod *corev1.Pod, ready bool, containerID string, restarts int32, started time.Time) {
	t.Helper()
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	pod.Status = corev1.PodStatus{
		Phase:      corev1.PodRunning,
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}},
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: "app", Image: "img", ContainerID: containerID, Ready: ready, Started: new(true), RestartCount: restarts,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(started)}},
		}},
	}
	if err := admin.Status().Update(context.Background(), pod); err != nil {
		t.Fatalf("update the status of pod %s: %v", pod.Name, err)
	}
}

func createPolicy(t *testing.T, ns, name string, spec v1alpha1.RecreatePolicySpec) *v1alpha1.RecreatePolicy {
	t.Helper()
	p := &v1alpha1.RecreatePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec}
	if err := admin.Create(context.Background(), p); err != nil {
		t.Fatalf("create RecreatePolicy %s: %v", name, err)
	}
	return p
}

func getPolicy(t *testing.T, p *v1alpha1.RecreatePolicy) *v1alpha1.RecreatePolicy {
	t.Helper()
	out := &v1alpha1.RecreatePolicy{}
	if err := admin.Get(context.Background(), client.ObjectKeyFromObject(p), out); err != nil {
		t.Fatal(err)
	}
	return out
}

func requestsOf(t *testing.T, p *v1alpha1.RecreatePolicy) []appsv1beta1.ContainerRecreateRequest {
	t.Helper()
	list := &appsv1beta1.ContainerRecreateRequestList{}
	if err := admin.List(context.Background(), list, client.InNamespace(p.Namespace), client.MatchingLabels{appsv1beta1.PolicyLabel: p.Name}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// complete plays the daemon and the kubelet: the request succeeded and its
// pod's container restarted at the clock's time.
func complete(t *testing.T, c *testReconciler, crr *appsv1beta1.ContainerRecreateRequest, ready bool) {
	t.Helper()
	crr.Status.Phase = appsv1beta1.PhaseCompleted
	crr.Status.Result = appsv1beta1.ResultSucceeded
	crr.Status.CompletionTime = &metav1.Time{Time: c.clock.Now()}
	crr.Status.ContainerRecreateStates = []appsv1beta1.ContainerRecreateRequestContainerRecreateState{{Name: "app", Phase: appsv1beta1.PhaseSucceeded}}
	if err := admin.Status().Update(context.Background(), crr); err != nil {
		t.Fatal(err)
	}
	restarted(t, c, crr.Namespace, crr.Spec.PodName, ready)
}

// failed ends crr Failed with message, its container not recreated.
func failed(t *testing.T, c *testReconciler, crr *appsv1beta1.ContainerRecreateRequest, message string) {
	t.Helper()
	crr.Status.Phase = appsv1beta1.PhaseCompleted
	crr.Status.Result = appsv1beta1.ResultFailed
	crr.Status.Message = message
	crr.Status.CompletionTime = &metav1.Time{Time: c.clock.Now()}
	if err := admin.Status().Update(context.Background(), crr); err != nil {
		t.Fatal(err)
	}
}

// restarted plays the kubelet after a recreation: the pod's container
// runs anew since the clock's time.
func restarted(t *testing.T, c *testReconciler, namespace, podName string, ready bool) {
	t.Helper()
	pod := &corev1.Pod{}
	if err := admin.Get(context.Background(), types.NamespacedName{Namespace: namespace, Name: podName}, pod); err != nil {
		t.Fatal(err)
	}
	restarts := pod.Status.ContainerStatuses[0].RestartCount + 1
	setPodStatus(t, pod, ready, fmt.Sprintf("containerd://%s-%d", pod.Name, restarts+1), restarts, c.clock.Now())
}

func inFlight(crrs []appsv1beta1.ContainerRecreateRequest) int {
	n := 0
	for _, crr := range crrs {
		if crr.Status.Phase != appsv1beta1.PhaseCompleted {
			n++
		}
	}
	return n
}

// decided reports whether the policy's recent decisions hold one with the
// outcome.
func decided(t *testing.T, p *v1alpha1.RecreatePolicy, outcome v1alpha1.DecisionOutcome) bool {
	t.Helper()
	for _, d := range getPolicy(t, p).Status.RecentDecisions {
		if d.Outcome == outcome {
			return true
		}
	}
	return false
}
