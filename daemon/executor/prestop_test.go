package executor

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// hook is a preStop httpGet of path on the server's host and port.
func hook(t *testing.T, srv *httptest.Server, scheme corev1.URIScheme, path string) *corev1.HTTPGetAction {
	t.Helper()
	host, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(port)
	return &corev1.HTTPGetAction{Host: host, Port: intstr.FromInt(n), Path: path, Scheme: scheme}
}

// TestPreStopHTTPGetAsTheKubelet: an https hook is called without
// verifying the pod's certificate, and a redirect to another host is not
// followed (the hook counts as run), as the kubelet does; a redirect on
// the same host is followed.
func TestPreStopHTTPGetAsTheKubelet(t *testing.T) {
	pod := &corev1.Pod{Status: corev1.PodStatus{PodIP: "127.0.0.1"}}
	var secure atomic.Int32
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { secure.Add(1) }))
	defer tlsSrv.Close()
	if err := preStopHTTP(context.Background(), hook(t, tlsSrv, corev1.URISchemeHTTPS, "/drain"), pod, nil); err != nil || secure.Load() != 1 {
		t.Errorf("https hook with the pod's own certificate: %v, %d calls; want called once", err, secure.Load())
	}

	elsewhere := &net.ListenConfig{}
	l, err := elsewhere.Listen(context.Background(), "tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatalf("listen on a second loopback address to redirect to: %v", err)
	}
	var reached atomic.Int32
	other := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached.Add(1) }))
	other.Listener = l
	other.Start()
	defer other.Close()
	var local atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/steal", http.StatusFound)
		case "/moved":
			http.Redirect(w, r, "/drain", http.StatusMovedPermanently)
		case "/drain":
			local.Add(1)
		}
	}))
	defer srv.Close()
	if err := preStopHTTP(context.Background(), hook(t, srv, corev1.URISchemeHTTP, "/away"), pod, nil); err != nil || reached.Load() != 0 {
		t.Errorf("redirect to another host: %v, the other host reached %d times; want no error and not reached", err, reached.Load())
	}
	if err := preStopHTTP(context.Background(), hook(t, srv, corev1.URISchemeHTTP, "/moved"), pod, nil); err != nil || local.Load() != 1 {
		t.Errorf("redirect on the same host: %v, %d calls of /drain; want followed", err, local.Load())
	}
}

// TestPreStopHTTPGetAnswersAsTheKubeletReadsThem: as the kubelet, any
// answer counts as the hook having run (a 500 is no failure), an https
// hook that answers in plain http is called again in http without its
// Authorization header, and the kubelet's User-Agent and Accept are sent
// unless the hook sets its own.
func TestPreStopHTTPGetAnswersAsTheKubeletReadsThem(t *testing.T) {
	pod := &corev1.Pod{Status: corev1.PodStatus{PodIP: "127.0.0.1"}}
	type call struct{ path, agent, accept, auth string }
	var mu sync.Mutex
	var calls []call
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls = append(calls, call{r.URL.Path, r.UserAgent(), r.Header.Get("Accept"), r.Header.Get("Authorization")})
		mu.Unlock()
		if r.URL.Path == "/broken" {
			http.Error(w, "draining failed", http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	last := func() call {
		mu.Lock()
		defer mu.Unlock()
		if len(calls) == 0 {
			return call{}
		}
		return calls[len(calls)-1]
	}

	if err := preStopHTTP(context.Background(), hook(t, srv, corev1.URISchemeHTTP, "/broken"), pod, nil); err != nil || last().path != "/broken" {
		t.Errorf("a hook answering 500: %v (last call %+v); want called and no error", err, last())
	}
	if c := last(); c.agent != "kube-lifecycle/rejuv" || c.accept != "*/*" {
		t.Errorf("defaults sent: User-Agent %q, Accept %q; want kube-lifecycle/rejuv and */*", c.agent, c.accept)
	}

	h := hook(t, srv, corev1.URISchemeHTTPS, "/plain")
	h.HTTPHeaders = []corev1.HTTPHeader{{Name: "Authorization", Value: "Bearer secret"}, {Name: "User-Agent", Value: "drainer"}, {Name: "Accept", Value: ""}}
	if err := preStopHTTP(context.Background(), h, pod, nil); err != nil {
		t.Errorf("an https hook answering in plain http: %v; want called again in http", err)
	}
	if c := last(); c.path != "/plain" || c.auth != "" || c.agent != "drainer" || c.accept != "" {
		t.Errorf("the http retry: %+v; want /plain without Authorization, the hook's User-Agent, no Accept", c)
	}
}

// TestPreStopCallsOnlyThePodsOwnIP: the kubelet calls a hook's host from
// the node; the daemon would call it from rejuv-system's network
// identity, which NetworkPolicies may let reach what the pod may not
// (issue 45, finding 13). A preStop httpGet or tcpSocket naming another
// host is not run, and says which field; one naming the pod's own IP, or
// none, is; what the hook answers is never repeated.
func TestPreStopCallsOnlyThePodsOwnIP(t *testing.T) {
	// reached counts the connections to the other host.
	var reached atomic.Int32
	elsewhere := &net.ListenConfig{}
	l, err := elsewhere.Listen(context.Background(), "tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatalf("listen on a second loopback address, the other host: %v", err)
	}
	other := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("secret of the other host"))
	}))
	other.Listener = l
	other.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			reached.Add(1)
		}
	}
	other.Start()
	defer other.Close()
	var own atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		own.Add(1)
		http.Error(w, "secret of the pod", http.StatusInternalServerError)
	}))
	defer srv.Close()
	pod := &corev1.Pod{Status: corev1.PodStatus{PodIP: "127.0.0.1"}}

	toOther := hook(t, other, corev1.URISchemeHTTP, "/steal")
	err = (&pass{pod: pod}).preStop(context.Background(), &v1beta1.ContainerRecreateRequestContainer{PreStop: &v1beta1.ProbeHandler{HTTPGet: toOther}}, "c1")
	if reached.Load() != 0 {
		t.Errorf("a preStop httpGet with host %s reached that host from the daemon", toOther.Host)
	}
	if err == nil || !strings.Contains(err.Error(), "lifecycle.preStop.httpGet.host") || strings.Contains(err.Error(), "secret") {
		t.Errorf("a preStop httpGet with another host: %v; want not run, naming lifecycle.preStop.httpGet.host, nothing it answered", err)
	}
	tcp := &corev1.TCPSocketAction{Host: toOther.Host, Port: toOther.Port}
	err = (&pass{pod: pod}).preStop(context.Background(), &v1beta1.ContainerRecreateRequestContainer{PreStop: &v1beta1.ProbeHandler{TCPSocket: tcp}}, "c1")
	if reached.Load() != 0 {
		t.Errorf("a preStop tcpSocket with host %s reached that host", tcp.Host)
	}
	if err == nil || !strings.Contains(err.Error(), "lifecycle.preStop.tcpSocket.host") {
		t.Errorf("a preStop tcpSocket with another host: %v; want not run, naming lifecycle.preStop.tcpSocket.host", err)
	}

	for _, host := range []string{"", pod.Status.PodIP} {
		h := hook(t, srv, corev1.URISchemeHTTP, "/drain")
		h.Host = host
		if err := (&pass{pod: pod}).preStop(context.Background(), &v1beta1.ContainerRecreateRequestContainer{PreStop: &v1beta1.ProbeHandler{HTTPGet: h}}, "c1"); err != nil {
			t.Errorf("a preStop httpGet with host %q at the pod's own IP: %v; want run", host, err)
		}
	}
	if own.Load() != 2 {
		t.Errorf("the pod's own hook was called %d times, want 2", own.Load())
	}

	noIP := &corev1.Pod{}
	if err := (&pass{pod: noIP}).preStop(context.Background(), &v1beta1.ContainerRecreateRequestContainer{PreStop: &v1beta1.ProbeHandler{HTTPGet: hook(t, srv, corev1.URISchemeHTTP, "/drain")}}, "c1"); err == nil || own.Load() != 2 {
		t.Errorf("a pod without an IP: %v, own hook called %d times; want not run (the daemon's own address is not the pod's)", err, own.Load())
	}
}
