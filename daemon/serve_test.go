package daemon

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
)

// The secure metrics endpoint serves TLS with its own certificate and asks
// for a token; the plain one serves the registry as it is.
func TestMetricsServer(t *testing.T) {
	api := &fakeReviews{}
	apiSrv := httptest.NewServer(api)
	defer apiSrv.Close()
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "rejuv_daemon_test_total", Help: "test"}))
	insecure := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, secure := range []bool{true, false} {
		s, err := metricsServer(Options{MetricsAddr: "127.0.0.1:0", MetricsSecure: secure, NodeName: "node-a"}, reg, reviewsAt(t, apiSrv.URL), logr.Discard())
		if err != nil {
			t.Fatal(err)
		}
		go func() { _ = s.serve(ctx) }()
		scheme := map[bool]string{true: "https", false: "http"}[secure]
		get := func(token string) (int, string) {
			req, _ := http.NewRequest(http.MethodGet, scheme+"://"+s.ln.Addr().String()+"/metrics", nil)
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := insecure.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(body)
		}
		if secure {
			if code, _ := get(""); code != http.StatusUnauthorized {
				t.Errorf("secure, no token: %d, want 401", code)
			}
		}
		if code, body := get("good"); code != http.StatusOK || !strings.Contains(body, "rejuv_daemon_test_total 0") {
			t.Errorf("secure %v: %d %q, want the registry's metrics", secure, code, body)
		}
	}
}

func TestProbes(t *testing.T) {
	rt := &Runtime{}
	var synced atomic.Bool
	h := probeHandler(rt, &synced)
	probe := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code, rec.Body.String()
	}
	if code, _ := probe("/healthz"); code != http.StatusOK {
		t.Errorf("/healthz = %d, want 200", code)
	}
	if code, body := probe("/readyz"); code != http.StatusInternalServerError || !strings.Contains(body, "looking for the container runtime") {
		t.Errorf("/readyz without a runtime = %d %q", code, body)
	}
}
