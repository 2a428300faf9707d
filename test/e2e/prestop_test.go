package e2e

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/test/images"
)

// listenerPort is where the listener container of the preStop tests
// accepts one connection.
const listenerPort = 9000

// listener is a container that accepts one connection on listenerPort,
// then writes "connected" to /ctl/tcp.
func listener() corev1.Container {
	return corev1.Container{
		Name: "listener", Image: images.TestApp.Ref(),
		Command:      []string{"/bin/busybox", "sh", "-c", fmt.Sprintf("/bin/busybox nc -l -p %d >/dev/null; echo connected > /ctl/tcp; exec sleep 3600", listenerPort)},
		VolumeMounts: []corev1.VolumeMount{{Name: "ctl", MountPath: "/ctl"}},
	}
}

// TestPreStopOfEachKindRunsBeforeTheStop gives app a preStop hook of each
// kind and observes it: exec writes to the shared volume, httpGet reaches
// side's server on the pod IP, tcpSocket connects to a listener of the pod,
// sleep delays the stop. A tcpSocket hook whose host is another address
// (the node's) is not run, and its PreStopFailed event names the field.
func TestPreStopOfEachKindRunsBeforeTheStop(t *testing.T) {
	t.Parallel()
	c := rejuvStack(t).Client
	nodeIP := cluster.Config.NodeIP().String()
	tests := []struct {
		name    string
		handler func(t *testing.T) (corev1.LifecycleHandler, func(t *testing.T, ns, pod string, created time.Time, oldApp string))
	}{
		{"exec", func(*testing.T) (corev1.LifecycleHandler, func(*testing.T, string, string, time.Time, string)) {
			h := corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", "echo ran in $(hostname) > /ctl/prestop"}}}
			return h, func(t *testing.T, ns, pod string, _ time.Time, _ string) {
				if got := strings.TrimSpace(execIn(t, ns, pod, "side", "cat", "/ctl/prestop")); got != "ran in "+pod {
					t.Errorf("exec preStop wrote %q", got)
				}
			}
		}},
		{"httpGet", func(*testing.T) (corev1.LifecycleHandler, func(*testing.T, string, string, time.Time, string)) {
			h := corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/prestop", Port: intstr.FromInt32(8081)}}
			return h, func(t *testing.T, ns, pod string, _ time.Time, _ string) {
				// side's testapp counts requests to unknown paths as "other".
				metrics := execIn(t, ns, pod, "side", "wget", "-q", "-O", "-", "http://127.0.0.1:8081/metrics")
				if !strings.Contains(metrics, `testapp_requests_total{code="404",path="other"} 1`) {
					t.Errorf("side saw no preStop request:\n%s", grepLines(metrics, "testapp_requests_total"))
				}
			}
		}},
		{"tcpSocket", func(*testing.T) (corev1.LifecycleHandler, func(*testing.T, string, string, time.Time, string)) {
			// The pod's listener container writes /ctl/tcp once connected.
			h := corev1.LifecycleHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(listenerPort)}}
			return h, func(t *testing.T, ns, pod string, _ time.Time, _ string) {
				if got := strings.TrimSpace(execIn(t, ns, pod, "side", "cat", "/ctl/tcp")); got != "connected" {
					t.Errorf("tcpSocket preStop never connected to the pod: /ctl/tcp is %q", got)
				}
			}
		}},
		{"tcpSocket-elsewhere", func(t *testing.T) (corev1.LifecycleHandler, func(*testing.T, string, string, time.Time, string)) {
			// Issue 45, finding 13: the daemon would connect from
			// rejuv-system's network identity, so it sends hooks to the
			// pod's own IP alone; the node's address is another host.
			l, err := net.Listen("tcp", nodeIP+":0")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = l.Close() })
			connected := make(chan struct{}, 1)
			go func() {
				if conn, err := l.Accept(); err == nil {
					connected <- struct{}{}
					_ = conn.Close()
				}
			}()
			h := corev1.LifecycleHandler{TCPSocket: &corev1.TCPSocketAction{Host: nodeIP, Port: intstr.FromInt(l.Addr().(*net.TCPAddr).Port)}}
			return h, func(t *testing.T, ns, pod string, _ time.Time, _ string) {
				select {
				case <-connected:
					t.Errorf("a tcpSocket preStop with host %s connected there", nodeIP)
				default:
				}
				events, err := kube.EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{FieldSelector: "regarding.name=" + pod})
				if err != nil {
					t.Fatal(err)
				}
				var notes []string
				for _, e := range events.Items {
					if e.Reason == "PreStopFailed" && strings.Contains(e.Note, "lifecycle.preStop.tcpSocket.host") {
						return
					}
					notes = append(notes, e.Reason+": "+e.Note)
				}
				t.Errorf("no PreStopFailed event naming lifecycle.preStop.tcpSocket.host on pod %s; events:\n%s", pod, strings.Join(notes, "\n"))
			}
		}},
		{"sleep", func(*testing.T) (corev1.LifecycleHandler, func(*testing.T, string, string, time.Time, string)) {
			h := corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 2}}
			return h, func(t *testing.T, _, _ string, created time.Time, oldApp string) {
				if _, stopped := criTimes(t, oldApp); stopped.Sub(created) < 2*time.Second {
					t.Errorf("container stopped %s after the request, before the 2s preStop sleep ended", stopped.Sub(created))
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, check := tt.handler(t)
			ns := newNamespace(t)
			spec := controlledPod("web")
			spec.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &h}
			spec.Spec.Containers = append(spec.Spec.Containers, listener())
			before := createPod(t, ns, spec)
			crr := newRequest(ns, "prestop-"+strings.ToLower(tt.name), before.Name, "app")
			created := time.Now()
			if err := c.Create(context.Background(), crr); err != nil {
				t.Fatal(err)
			}
			got, _ := waitCompleted(t, c, crr, 60*time.Second)
			if got.Status.Result != v1beta1.ResultSucceeded {
				t.Fatalf("result %q: %+v", got.Status.Result, got.Status.ContainerRecreateStates)
			}
			// One request, one restart: the kubelet keeps the stopped
			// instance, which the checks read, while no newer one has died.
			after, err := kube.CoreV1().Pods(ns).Get(context.Background(), before.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if was, now := containerStatus(before, "app").RestartCount, containerStatus(after, "app").RestartCount; now != was+1 {
				t.Fatalf("app's restartCount %d -> %d, want +1; the runtime's instances of app:\n%s", was, now, instancesOf(t, after, "app"))
			}
			check(t, ns, before.Name, created, containerStatus(before, "app").ContainerID)
		})
	}
}
