package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rejuv-dev/rejuv/test/deploy"
)

// TestDaemonFindsTheNodesRuntime reads the installed daemon's metrics: it
// found containerd's socket in the directory the DaemonSet mounts from the
// host, and names the version the kubelet reports for the node (containerd
// 1.6 says "1.6.20~ds1" to both, containerd 2 "v2.4.2" to the daemon and
// "2.4.2" to the kubelet).
func TestDaemonFindsTheNodesRuntime(t *testing.T) {
	t.Parallel()
	for _, n := range cluster.Nodes() {
		node, err := kube.CoreV1().Nodes().Get(context.Background(), n.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		runtime, version, ok := strings.Cut(node.Status.NodeInfo.ContainerRuntimeVersion, "://")
		if !ok || runtime != "containerd" {
			t.Fatalf("premise: node %s runs %q, want containerd://VERSION", node.Name, node.Status.NodeInfo.ContainerRuntimeVersion)
		}
		body := daemonMetrics(t, n.Name)
		if !strings.Contains(body, `rejuv_daemon_runtime_info{runtime="containerd",version="`+version+`"}`) &&
			!strings.Contains(body, `rejuv_daemon_runtime_info{runtime="containerd",version="v`+version+`"}`) {
			t.Errorf("the daemon of %s: metrics lack rejuv_daemon_runtime_info for containerd %s (the node's runtime):\n%s", n.Name, version, grepLines(body, "rejuv_daemon"))
		}
		if !strings.Contains(body, `rejuv_daemon_cri_request_duration_seconds_count{code="OK",method="Version"}`) {
			t.Errorf("the daemon of %s: metrics lack the timed Version call:\n%s", n.Name, grepLines(body, "rejuv_daemon"))
		}
	}
}

// TestDaemonWithoutRuntimeIsNotReadyAndSaysWhy runs a second daemon from
// the installed image and service account, pointed at a socket that does
// not exist and at a node with no pods (so that it leaves the installed
// daemon's work alone): it says why it cannot work and stays not ready,
// but alive.
func TestDaemonWithoutRuntimeIsNotReadyAndSaysWhy(t *testing.T) {
	t.Parallel()
	s := rejuvStack(t)
	ctx := context.Background()
	ds, err := s.Kube.AppsV1().DaemonSets(deploy.Namespace).Get(ctx, deploy.DaemonSet, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	installed := ds.Spec.Template.Spec.Containers[0]
	const missing = "/no-runtime/cri.sock"
	probe := func(path string) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(8082)}}, PeriodSeconds: 1}
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: deploy.Namespace, Name: "rejuv-e2e-daemon-without-runtime"},
		Spec: corev1.PodSpec{
			ServiceAccountName: ds.Spec.Template.Spec.ServiceAccountName,
			Containers: []corev1.Container{{
				Name: "daemon", Image: installed.Image,
				Args:            []string{"--node-name=no-such-node", "--cri-socket=" + missing, "--health-probe-bind-address=:8082", "--metrics-bind-address=0"},
				ReadinessProbe:  probe("/readyz"),
				LivenessProbe:   probe("/healthz"),
				SecurityContext: installed.SecurityContext,
			}},
		},
	}
	if _, err := s.Kube.CoreV1().Pods(deploy.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Kill(context.Background(), pod.Name) })
	running := waitPod(t, deploy.Namespace, pod.Name, "running", func(p *corev1.Pod) bool { return p.Status.PodIP != "" && p.Status.Phase == corev1.PodRunning })
	waitLog(t, running, "no container runtime answered the CRI Version call; tried "+missing+": no such file; check --cri-socket", 30*time.Second)
	base := fmt.Sprintf("http://%s:8082", running.Status.PodIP)
	if code := httpStatus(ctx, base+"/readyz"); code != http.StatusInternalServerError {
		t.Errorf("/readyz = %d without a runtime, want 500", code)
	}
	if code := httpStatus(ctx, base+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz = %d, want 200: a missing runtime is not a reason to restart the daemon", code)
	}
	// Five seconds of probes later: still not ready, never restarted.
	time.Sleep(5 * time.Second)
	cur, err := s.Kube.CoreV1().Pods(deploy.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st := containerStatus(cur, "daemon"); st.Ready || st.RestartCount != 0 {
		t.Errorf("daemon without a runtime: ready %t, restarts %d; want not ready and never restarted", st.Ready, st.RestartCount)
	}
}

// httpStatus GETs url and returns the status code, or 0 when nothing answers.
func httpStatus(ctx context.Context, url string) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func grepLines(s, sub string) string {
	var out []string
	for line := range strings.SplitSeq(s, "\n") {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
