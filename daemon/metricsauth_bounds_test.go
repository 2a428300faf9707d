package daemon

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// countingReviews authenticates no token; it counts the token reviews, the
// most under way at once, and holds each until hold is closed (when set).
type countingReviews struct {
	reviews, under, most atomic.Int32
	hold                 chan struct{}
}

func (c *countingReviews) ReviewToken(ctx context.Context, tr *authenticationv1.TokenReview) (*authenticationv1.TokenReview, error) {
	c.reviews.Add(1)
	n := c.under.Add(1)
	defer c.under.Add(-1)
	for m := c.most.Load(); n > m && !c.most.CompareAndSwap(m, n); m = c.most.Load() {
	}
	if c.hold != nil {
		select {
		case <-c.hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return tr, nil
}

func (c *countingReviews) ReviewAccess(context.Context, *authorizationv1.SubjectAccessReview) (*authorizationv1.SubjectAccessReview, error) {
	return nil, fmt.Errorf("no token is authenticated, so no access is reviewed")
}

func scrapeWith(h http.Handler, header string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Authorization", header)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func servedNothing(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }

// TestMetricsAuthRemembersARefusal: the same unknown token sent again and
// again costs the API server one review while the refusal is remembered,
// and one more once it has expired (issue 45, finding 11).
func TestMetricsAuthRemembersARefusal(t *testing.T) {
	api := &countingReviews{}
	clk := clocktesting.NewFakePassiveClock(time.Now())
	a := &metricsAuth{api: api, clock: clk}
	h := a.filter(logr.Discard(), http.HandlerFunc(servedNothing))
	for i := range 100 {
		if rec := scrapeWith(h, "Bearer forged"); rec.Code != http.StatusUnauthorized {
			t.Fatalf("request %d: code %d, want %d", i, rec.Code, http.StatusUnauthorized)
		}
	}
	if got := api.reviews.Load(); got != 1 {
		t.Errorf("100 requests with the same unknown token cost %d token reviews, want 1", got)
	}
	clk.SetTime(clk.Now().Add(metricsDenyTTL))
	scrapeWith(h, "Bearer forged")
	if got := api.reviews.Load(); got != 2 {
		t.Errorf("after %s the refusal is still remembered: %d token reviews, want 2", metricsDenyTTL, got)
	}
}

// TestMetricsAuthBoundsReviewsUnderWay: many requests with distinct
// tokens at once never hold more than metricsMaxReviews reviews under way;
// the others are answered 429 at once, saying why.
func TestMetricsAuthBoundsReviewsUnderWay(t *testing.T) {
	api := &countingReviews{hold: make(chan struct{})}
	a := &metricsAuth{api: api, clock: clocktesting.NewFakePassiveClock(time.Now())}
	h := a.filter(logr.Discard(), http.HandlerFunc(servedNothing))
	const requests = 40
	codes := make(chan *httptest.ResponseRecorder, requests)
	var wg sync.WaitGroup
	for i := range requests {
		wg.Go(func() { codes <- scrapeWith(h, fmt.Sprintf("Bearer token-%d", i)) })
	}
	// Every request past the bound is answered without waiting for the
	// held reviews.
	deadline := time.Now().Add(5 * time.Second)
	for len(codes) < requests-metricsMaxReviews && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	answered := len(codes)
	close(api.hold)
	wg.Wait()
	close(codes)
	if answered < requests-metricsMaxReviews {
		t.Errorf("%d of %d requests answered while %d reviews were held, want at least %d", answered, requests, metricsMaxReviews, requests-metricsMaxReviews)
	}
	if most := api.most.Load(); most > metricsMaxReviews {
		t.Errorf("%d token reviews under way at once, want at most %d", most, metricsMaxReviews)
	}
	busy := 0
	for rec := range codes {
		if rec.Code == http.StatusTooManyRequests {
			busy++
			if want := fmt.Sprintf("at most %d", metricsMaxReviews); !strings.Contains(rec.Body.String(), want) {
				t.Errorf("429 says %q, want it to name the bound (%s)", rec.Body.String(), want)
			}
		}
	}
	if busy < requests-metricsMaxReviews {
		t.Errorf("%d requests answered 429, want at least %d", busy, requests-metricsMaxReviews)
	}
}

// TestMetricsAuthBoundsWhatItRemembers: distinct unknown tokens without
// end leave at most metricsRememberedMax decisions in memory.
func TestMetricsAuthBoundsWhatItRemembers(t *testing.T) {
	api := &countingReviews{}
	a := &metricsAuth{api: api, clock: clocktesting.NewFakePassiveClock(time.Now())}
	h := a.filter(logr.Discard(), http.HandlerFunc(servedNothing))
	for i := range 3 * metricsRememberedMax {
		scrapeWith(h, fmt.Sprintf("Bearer token-%d", i))
	}
	a.mu.Lock()
	n := len(a.decisions)
	a.mu.Unlock()
	if n > metricsRememberedMax {
		t.Errorf("%d decisions remembered, want at most %d", n, metricsRememberedMax)
	}
}

// TestMetricsAuthRefusesAnOversizedHeader: an Authorization header past
// metricsMaxAuthorization is refused before any review, naming the bound.
func TestMetricsAuthRefusesAnOversizedHeader(t *testing.T) {
	api := &countingReviews{}
	a := &metricsAuth{api: api, clock: clocktesting.NewFakePassiveClock(time.Now())}
	h := a.filter(logr.Discard(), http.HandlerFunc(servedNothing))
	rec := scrapeWith(h, "Bearer "+strings.Repeat("x", metricsMaxAuthorization))
	if rec.Code != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("code %d, want %d", rec.Code, http.StatusRequestHeaderFieldsTooLarge)
	}
	if want := fmt.Sprintf("at most %d bytes", metricsMaxAuthorization); !strings.Contains(rec.Body.String(), want) {
		t.Errorf("refusal %q, want it to name the bound (%s)", rec.Body.String(), want)
	}
	if got := api.reviews.Load(); got != 0 {
		t.Errorf("%d token reviews for an oversized header, want none", got)
	}
}
