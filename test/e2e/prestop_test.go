package e2e

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// TestPreStopOfEachKindRunsBeforeTheStop gives app a preStop hook of each
// kind and observes it: exec writes to the shared volume, httpGet reaches
// side's server on the pod IP, tcpSocket connects to a listener of the test,
// sleep delays the stop.
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
		{"tcpSocket", func(t *testing.T) (corev1.LifecycleHandler, func(*testing.T, string, string, time.Time, string)) {
			l, err := net.Listen("tcp", nodeIP+":0")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = l.Close() })
			connected := make(chan time.Time, 1)
			go func() {
				conn, err := l.Accept()
				if err == nil {
					connected <- time.Now()
					_ = conn.Close()
				}
			}()
			port := l.Addr().(*net.TCPAddr).Port
			h := corev1.LifecycleHandler{TCPSocket: &corev1.TCPSocketAction{Host: nodeIP, Port: intstr.FromInt(port)}}
			return h, func(t *testing.T, _, _ string, _ time.Time, oldApp string) {
				select {
				case at := <-connected:
					if _, stopped := criTimes(t, oldApp); !at.Before(stopped) {
						t.Errorf("tcpSocket preStop connected at %s, after the container stopped at %s", at, stopped)
					}
				default:
					t.Error("tcpSocket preStop never connected")
				}
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
			check(t, ns, before.Name, created, containerStatus(before, "app").ContainerID)
		})
	}
}
