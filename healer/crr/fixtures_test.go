package crr

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
)

func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "crr-"}}
	if err := admin.Create(context.Background(), ns); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	return ns.Name
}

// createNode creates a node whose Ready condition has status and changed
// at since.
func createNode(t *testing.T, status corev1.ConditionStatus, since time.Time) string {
	t.Helper()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{GenerateName: "node-"}}
	if err := admin.Create(context.Background(), node); err != nil {
		t.Fatal(err)
	}
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status, Reason: "KubeletNotReady",
		LastTransitionTime: metav1.NewTime(since), LastHeartbeatTime: metav1.NewTime(since)}}
	if err := admin.Status().Update(context.Background(), node); err != nil {
		t.Fatal(err)
	}
	return node.Name
}

// createPod creates a running pod "web" with containers app and sidecar on
// node; gated adds the KruisePodReady readiness gate.
func createPod(t *testing.T, ns, node string, gated bool) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{
			{Name: "app", Image: "img"}, {Name: "sidecar", Image: "img"},
		}},
	}
	if gated {
		pod.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: PodReadyCondition}}
	}
	if err := admin.Create(context.Background(), pod); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	return pod
}

// createCRR creates a request for pod's containers with the labels the
// webhook sets, then the status a daemon would have written.
func createCRR(t *testing.T, pod *corev1.Pod, name string, spec func(*v1beta1.ContainerRecreateRequestSpec), status *v1beta1.ContainerRecreateRequestStatus) *v1beta1.ContainerRecreateRequest {
	t.Helper()
	crr := &v1beta1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: name, Labels: map[string]string{
			v1beta1.PodUIDLabel: string(pod.UID), v1beta1.NodeNameLabel: pod.Spec.NodeName, v1beta1.ActiveLabel: "true",
		}, Annotations: map[string]string{v1beta1.ContainersAnnotation: "app,sidecar"}},
		Spec: v1beta1.ContainerRecreateRequestSpec{PodName: pod.Name, Containers: []v1beta1.ContainerRecreateRequestContainer{
			{Name: "app"}, {Name: "sidecar"},
		}},
	}
	if spec != nil {
		spec(&crr.Spec)
	}
	if err := admin.Create(context.Background(), crr); err != nil {
		t.Fatalf("create ContainerRecreateRequest: %v", err)
	}
	if status != nil {
		writeStatus(t, crr, func(s *v1beta1.ContainerRecreateRequestStatus) { *s = *status })
	}
	return crr
}

// writeStatus plays the daemon: it changes the request's status, retrying
// on conflicts with the controller.
func writeStatus(t *testing.T, crr *v1beta1.ContainerRecreateRequest, change func(*v1beta1.ContainerRecreateRequestStatus)) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		cur := &v1beta1.ContainerRecreateRequest{}
		if err := admin.Get(ctx, client.ObjectKeyFromObject(crr), cur); err != nil {
			return false, err
		}
		change(&cur.Status)
		if err := admin.Status().Update(ctx, cur); err != nil {
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("write status of %s: %v", crr.Name, err)
	}
}

// waitCRR polls the request until cond holds.
func waitCRR(t *testing.T, crr *v1beta1.ContainerRecreateRequest, timeout time.Duration, what string, cond func(*v1beta1.ContainerRecreateRequest) bool) *v1beta1.ContainerRecreateRequest {
	t.Helper()
	var last *v1beta1.ContainerRecreateRequest
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		cur := &v1beta1.ContainerRecreateRequest{}
		if err := admin.Get(ctx, client.ObjectKeyFromObject(crr), cur); err != nil {
			return false, nil
		}
		last = cur
		return cond(cur), nil
	})
	if err != nil {
		t.Fatalf("ContainerRecreateRequest %s not %s within %s; last: labels %v status %+v", crr.Name, what, timeout, labelsOf(last), statusOf(last))
	}
	return last
}

func labelsOf(c *v1beta1.ContainerRecreateRequest) map[string]string {
	if c == nil {
		return nil
	}
	return c.Labels
}

func statusOf(c *v1beta1.ContainerRecreateRequest) any {
	if c == nil {
		return nil
	}
	return c.Status
}

func completed(c *v1beta1.ContainerRecreateRequest) bool {
	return c.Status.Phase == v1beta1.PhaseCompleted
}

func retired(c *v1beta1.ContainerRecreateRequest) bool {
	_, active := c.Labels[v1beta1.ActiveLabel]
	return completed(c) && !active
}

func podReadyStatus(t *testing.T, pod *corev1.Pod) corev1.ConditionStatus {
	t.Helper()
	cur := &corev1.Pod{}
	if err := admin.Get(context.Background(), types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}, cur); err != nil {
		t.Fatal(err)
	}
	if c := pods.Condition(cur, PodReadyCondition); c != nil {
		return c.Status
	}
	return ""
}

func waitPodReady(t *testing.T, pod *corev1.Pod, want corev1.ConditionStatus) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return podReadyStatus(t, pod) == want, nil
	})
	if err != nil {
		t.Fatalf("pod %s: %s is %q, want %q", pod.Name, PodReadyCondition, podReadyStatus(t, pod), want)
	}
}

// eventsAbout returns "Type Reason: note" of the events regarding obj.
func eventsAbout(t *testing.T, ns, kind, name string) []string {
	t.Helper()
	list := &eventsv1.EventList{}
	if err := admin.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Kind == kind && e.Regarding.Name == name {
			out = append(out, fmt.Sprintf("%s %s: %s", e.Type, e.Reason, e.Note))
		}
	}
	return out
}

func waitEvent(t *testing.T, ns, kind, name, want string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		for _, e := range eventsAbout(t, ns, kind, name) {
			if strings.Contains(e, want) {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no event on %s %s containing %q; events: %q", kind, name, want, eventsAbout(t, ns, kind, name))
	}
}
