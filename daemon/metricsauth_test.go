package daemon

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/rejuv-dev/rejuv/daemon/kube"
)

// fakeReviews answers token and access reviews: "good" and "reader" are
// valid tokens, only "good"'s user may get /metrics.
type fakeReviews struct {
	reviews atomic.Int32
}

func (f *fakeReviews) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.reviews.Add(1)
	switch r.URL.Path {
	case "/apis/authentication.k8s.io/v1/tokenreviews":
		tr := &authenticationv1.TokenReview{}
		_ = json.NewDecoder(r.Body).Decode(tr)
		switch tr.Spec.Token {
		case "good":
			tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{Username: "prometheus"}}
		case "reader":
			tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{Username: "someone"}}
		}
		tr.APIVersion, tr.Kind = "authentication.k8s.io/v1", "TokenReview"
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(tr)
	case "/apis/authorization.k8s.io/v1/subjectaccessreviews":
		sar := &authorizationv1.SubjectAccessReview{}
		_ = json.NewDecoder(r.Body).Decode(sar)
		na := sar.Spec.NonResourceAttributes
		sar.Status.Allowed = sar.Spec.User == "prometheus" && na != nil && na.Path == "/metrics" && na.Verb == "get"
		sar.APIVersion, sar.Kind = "authorization.k8s.io/v1", "SubjectAccessReview"
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(sar)
	default:
		http.NotFound(w, r)
	}
}

// reviewsAt is the daemon's client of an API server at host.
func reviewsAt(t *testing.T, host string) *kube.Client {
	t.Helper()
	c, err := kube.New(&rest.Config{Host: host, ContentConfig: rest.ContentConfig{ContentType: "application/json"}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestMetricsAuth(t *testing.T) {
	tests := []struct {
		name        string
		header      string
		wantCode    int
		wantReviews int32
	}{
		{name: "no token", header: "", wantCode: http.StatusUnauthorized, wantReviews: 0},
		{name: "not a bearer token", header: "Basic Zm9vOmJhcg==", wantCode: http.StatusUnauthorized, wantReviews: 0},
		{name: "unknown token", header: "Bearer forged", wantCode: http.StatusUnauthorized, wantReviews: 1},
		{name: "user without access", header: "Bearer reader", wantCode: http.StatusForbidden, wantReviews: 2},
		{name: "allowed", header: "Bearer good", wantCode: http.StatusOK, wantReviews: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := &fakeReviews{}
			srv := httptest.NewServer(api)
			defer srv.Close()
			a := &metricsAuth{api: reviewsAt(t, srv.URL), clock: clocktesting.NewFakePassiveClock(time.Now())}
			h := a.filter(logr.Discard(), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			if tt.header != "" {
				req.Header.Set("Authorization", tt.header)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.wantCode {
				t.Errorf("code = %d, want %d", rec.Code, tt.wantCode)
			}
			if got := api.reviews.Load(); got != tt.wantReviews {
				t.Errorf("reviews = %d, want %d", got, tt.wantReviews)
			}
		})
	}
}

// TestMetricsAuthRemembersAnAllowForAMinute: a scrape every few seconds
// costs the API server two reviews a minute, not two a scrape.
func TestMetricsAuthRemembersAnAllowForAMinute(t *testing.T) {
	api := &fakeReviews{}
	srv := httptest.NewServer(api)
	defer srv.Close()
	clk := clocktesting.NewFakePassiveClock(time.Now())
	a := &metricsAuth{api: reviewsAt(t, srv.URL), clock: clk}
	h := a.filter(logr.Discard(), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	scrape := func(path string) int {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("Authorization", "Bearer good")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	for _, step := range []struct {
		after       time.Duration
		path        string
		wantCode    int
		wantReviews int32
	}{
		{0, "/metrics", http.StatusOK, 2},
		{30 * time.Second, "/metrics", http.StatusOK, 2},
		{0, "/other", http.StatusForbidden, 4},
		{31 * time.Second, "/metrics", http.StatusOK, 6},
	} {
		clk.SetTime(clk.Now().Add(step.after))
		if got := scrape(step.path); got != step.wantCode {
			t.Errorf("after %s, %s: code = %d, want %d", step.after, step.path, got, step.wantCode)
		}
		if got := api.reviews.Load(); got != step.wantReviews {
			t.Errorf("after %s, %s: reviews = %d, want %d", step.after, step.path, got, step.wantReviews)
		}
	}
}
