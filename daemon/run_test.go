package daemon

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// A daemon started while the API server cannot answer (restarting, or not
// serving the CustomResourceDefinitions yet) waits for it instead of
// exiting: soak seed 13 saw a daemon of a rollout exit 1 twice ("ask the
// API server for /apis/...") across a kube-apiserver restart.
func TestRunWaitsForTheAPIServerAtStart(t *testing.T) {
	var discovery, lists atomic.Int32
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/apis/apps.kruise.io/v1beta1":
			if discovery.Add(1) <= 2 {
				http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"ServiceUnavailable","code":503}`, http.StatusServiceUnavailable)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"kind":"APIResourceList","groupVersion":"apps.kruise.io/v1beta1","resources":[{"name":"containerrecreaterequests","namespaced":true,"kind":"ContainerRecreateRequest","verbs":["get"]},{"name":"containerrecreaterequests/status","namespaced":true,"kind":"ContainerRecreateRequest","verbs":["update"]}]}`))
		case strings.HasSuffix(r.URL.Path, "/pods") || strings.HasSuffix(r.URL.Path, "/containerrecreaterequests"):
			lists.Add(1)
			<-r.Context().Done() // the caches' start is all this test looks for
		default:
			http.NotFound(w, r)
		}
	}))
	defer api.Close()

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Run(ctx, &rest.Config{Host: api.URL}, testOptions(t)) }()
	deadline := time.After(20 * time.Second)
	for lists.Load() == 0 {
		select {
		case err := <-done:
			t.Fatalf("Run returned %v while the API server could not answer yet, want it to wait for it", err)
		case <-deadline:
			t.Fatalf("the caches did not start once the API server served the requests (discovery asked %d times)", discovery.Load())
		case <-time.After(50 * time.Millisecond):
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run after its context ended: %v, want nil", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Run did not return once its context ended")
	}
}

// A daemon whose API server never answers waits until it is stopped, and
// then exits cleanly.
func TestRunStoppedWhileTheAPIServerIsUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host := "http://" + ln.Addr().String()
	_ = ln.Close() // connection refused, as while kube-apiserver restarts
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	time.AfterFunc(2*time.Second, cancel) // a signal
	start := time.Now()
	if err := Run(ctx, &rest.Config{Host: host}, testOptions(t)); err != nil {
		t.Fatalf("Run: %v, want it to wait for the API server and return nil when stopped", err)
	}
	if waited := time.Since(start); waited < 1500*time.Millisecond {
		t.Errorf("Run returned after %s, before it was stopped", waited)
	}
}

func testOptions(t *testing.T) Options {
	dir := t.TempDir()
	return Options{NodeName: "node-a", CRISocket: filepath.Join(dir, "none.sock"), HostRunDir: dir, MetricsAddr: "0", ProbeAddr: "127.0.0.1:0"}
}
