package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/rejuv-dev/rejuv/test/cluster/harness"
	"github.com/rejuv-dev/rejuv/test/images"
)

// newNamespace creates a namespace for one test and deletes it afterwards.
func newNamespace(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	ns, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	t.Cleanup(func() {
		_ = kube.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
	})
	// Pods are rejected until the namespace's default ServiceAccount exists.
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := kube.CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("namespace %s: no default ServiceAccount: %v", ns.Name, err)
	}
	return ns.Name
}

// testappPod is a pod running testapp with readiness and liveness probes.
func testappPod(name string) *corev1.Pod {
	probe := func(path string) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(8080)}},
			PeriodSeconds:    1,
			FailureThreshold: 1,
		}
	}
	grace := int64(2)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: &grace,
			Containers: []corev1.Container{{
				Name:           "app",
				Image:          images.TestApp.Ref(),
				Ports:          []corev1.ContainerPort{{ContainerPort: 8080}},
				ReadinessProbe: probe("/readyz"),
			}},
		},
	}
}

// readinessUnderLoad has the pods' readiness probe take a pod out of
// service only after three probes in a row failed or took over 2 s: a
// rolling restart's test counts the pods out of service at once, and on a
// loaded machine a single probe of testapp's (1 s, once) can time out,
// taking a pod out that nothing restarted (and that Rejuv may then take
// as unavailable already). A recreated container is still out of service
// until its first probe succeeds.
func readinessUnderLoad(spec *corev1.PodSpec) {
	for i := range spec.Containers {
		if p := spec.Containers[i].ReadinessProbe; p != nil {
			p.TimeoutSeconds, p.FailureThreshold = 2, 3
		}
	}
}

// createPod creates pod in ns and waits until it is Running and Ready.
// secondNode is the cluster's second node, for the tests that need two.
func secondNode(t *testing.T) harness.Node {
	t.Helper()
	nodes := cluster.Nodes()
	if len(nodes) < 2 {
		t.Fatalf("the cluster runs %d node; this test needs two (REJUV_NODES=2)", len(nodes))
	}
	return nodes[1]
}

// onNode has the pod run on the named node.
func onNode(pod *corev1.Pod, node string) *corev1.Pod {
	pod.Spec.NodeName = node
	return pod
}

func createPod(t *testing.T, ns string, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	created, err := kube.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pod %s/%s: %v", ns, pod.Name, err)
	}
	return waitPod(t, ns, created.Name, "Running and Ready", podReady(true))
}

// waitPod polls the pod until cond holds, failing the test after a minute.
func waitPod(t *testing.T, ns, name, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var last *corev1.Pod
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = p
		return cond(p), nil
	})
	if err != nil {
		t.Fatalf("pod %s/%s not %s: %v\nlast status: %s", ns, name, what, err, describeStatus(last))
	}
	return last
}

func podReady(want bool) func(*corev1.Pod) bool {
	return func(p *corev1.Pod) bool {
		if p.Status.Phase != corev1.PodRunning {
			return false
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady {
				return (c.Status == corev1.ConditionTrue) == want
			}
		}
		return false
	}
}

func describeStatus(p *corev1.Pod) string {
	if p == nil {
		return "(never read)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "phase=%s", p.Status.Phase)
	for _, c := range p.Status.Conditions {
		fmt.Fprintf(&b, " %s=%s", c.Type, c.Status)
	}
	for _, cs := range p.Status.ContainerStatuses {
		fmt.Fprintf(&b, " [%s ready=%v restarts=%d id=%s state=%+v]", cs.Name, cs.Ready, cs.RestartCount, cs.ContainerID, cs.State)
	}
	return b.String()
}

// control calls testapp's control endpoint on the pod's IP, as a user on
// the node would.
func control(t *testing.T, pod *corev1.Pod, query string) {
	t.Helper()
	url := fmt.Sprintf("http://%s:8080/control?%s", pod.Status.PodIP, query)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s: %s", url, resp.Status, body)
	}
}

func containerStatus(p *corev1.Pod, name string) corev1.ContainerStatus {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == name {
			return cs
		}
	}
	return corev1.ContainerStatus{}
}
