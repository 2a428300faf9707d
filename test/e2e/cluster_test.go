package e2e

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/rejuv-dev/rejuv/test/cluster/harness"
)

func TestTestappPodBecomesRunningAndReady(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	pod := createPod(t, ns, testappPod("ready"))
	if _, err := cluster.Node(pod.Spec.NodeName); err != nil {
		t.Errorf("pod ran on node %q: %v", pod.Spec.NodeName, err)
	}
	if pod.Status.PodIP == "" {
		t.Errorf("Running pod has no IP")
	}
}

func TestReadinessFlipMakesPodNotReadyAndBack(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	pod := createPod(t, ns, testappPod("flip"))

	control(t, pod, "ready=false")
	waitPod(t, ns, pod.Name, "NotReady", podReady(false))
	control(t, pod, "ready=true")
	waitPod(t, ns, pod.Name, "Ready again", podReady(true))
}

// TestCRIStopMakesKubeletStartNewContainer is the mechanism Rejuv's daemon
// relies on: stopping a container through the CRI makes the kubelet start a
// new one in the same pod.
func TestCRIStopMakesKubeletStartNewContainer(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	before := createPod(t, ns, testappPod("recreate"))
	old := containerStatus(before, "app")
	id, ok := strings.CutPrefix(old.ContainerID, "containerd://")
	if !ok {
		t.Fatalf("container ID %q is not a containerd ID", old.ContainerID)
	}

	rt := runtimeOf(t, before.Spec.NodeName)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := rt.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: 2}); err != nil {
		t.Fatalf("CRI StopContainer %s: %v", id, err)
	}

	after := waitPod(t, ns, before.Name, "running a new container", func(p *corev1.Pod) bool {
		cs := containerStatus(p, "app")
		return cs.ContainerID != old.ContainerID && cs.State.Running != nil
	})
	now := containerStatus(after, "app")
	if now.RestartCount != old.RestartCount+1 {
		t.Errorf("restartCount = %d, want %d", now.RestartCount, old.RestartCount+1)
	}
	if after.UID != before.UID {
		t.Errorf("pod UID changed from %s to %s: the pod was replaced, not its container", before.UID, after.UID)
	}
	if after.Status.PodIP != before.Status.PodIP {
		t.Errorf("pod IP changed from %s to %s", before.Status.PodIP, after.Status.PodIP)
	}
}

// TestExecRunsBusyboxInTestapp shows that exec through the apiserver and the
// kubelet works, and that testapp carries a shell.
func TestExecRunsBusyboxInTestapp(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	pod := createPod(t, ns, testappPod("exec"))

	out := execIn(t, ns, pod.Name, "app", "sh", "-c", "echo hello from $(hostname)")
	if got, want := strings.TrimSpace(out), "hello from "+pod.Name; got != want {
		t.Errorf("exec output = %q, want %q", got, want)
	}
}

func TestUpReusesTheHealthyCluster(t *testing.T) {
	t.Parallel()
	before, err := kube.CoreV1().Nodes().Get(context.Background(), cluster.NodeName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	again, err := harness.Up(context.Background(), cluster.Config)
	if err != nil {
		t.Fatalf("second Up: %v", err)
	}
	if again.Started {
		t.Fatal("second Up started a new cluster instead of reusing the healthy one")
	}
	after, err := kube.CoreV1().Nodes().Get(context.Background(), cluster.NodeName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.UID != before.UID {
		t.Errorf("node UID changed from %s to %s: the cluster was recreated", before.UID, after.UID)
	}
}

// execIn runs a command in a container through the API server and the
// kubelet, as kubectl exec does, and returns its standard output.
func execIn(t *testing.T, ns, pod, container string, command ...string) string {
	t.Helper()
	req := kube.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: command, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	exec, err := remotecommand.NewWebSocketExecutor(restCfg, "GET", req.URL().String())
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stderr}); err != nil {
		t.Fatalf("exec %v in %s/%s %s: %v (stderr %q)", command, ns, pod, container, err, stderr.String())
	}
	return stdout.String()
}
