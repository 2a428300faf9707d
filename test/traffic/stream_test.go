package traffic

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestStreamCountsEveryRequestInItsPhase(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if served.Add(1)%10 == 0 {
			http.Error(w, "every tenth fails", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("testapp web-1\n"))
	}))
	defer srv.Close()
	for _, keepAlive := range []bool{true, false} {
		served.Store(0)
		s, err := Start(srv.URL, "before", Options{Rate: 200, KeepAlive: keepAlive, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		for s.Sent() < 50 {
			time.Sleep(5 * time.Millisecond)
		}
		s.Phase("during")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := s.Wait(ctx); err != nil {
			t.Fatalf("the stream did not stop at its limit: %v", err)
		}
		cancel()
		r := s.Stop()
		sent, failed := r.Total()
		if sent != 100 || failed != 10 {
			t.Errorf("keep-alive %t: %d sent, %d failed; want 100 and 10", keepAlive, sent, failed)
		}
		before, during := r.Phase("before"), r.Phase("during")
		if before.Sent < 50 || before.Sent+during.Sent != 100 {
			t.Errorf("keep-alive %t: %d before and %d during; want at least 50 before, 100 in all", keepAlive, before.Sent, during.Sent)
		}
		if f := r.Failures(); len(f) != 1 || f[0] != "10 × 503 Service Unavailable" {
			t.Errorf("keep-alive %t: failures %q", keepAlive, f)
		}
		if r.LastAnswered("testapp web-1").IsZero() || before.P50 <= 0 || before.Max < before.P99 || before.P99 < before.P50 {
			t.Errorf("keep-alive %t: no answer from web-1 recorded, or latencies out of order: %+v", keepAlive, before)
		}
	}
}

func TestStreamCountsRefusedConnections(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	s, err := Start(url, "down", Options{Rate: 100, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Wait(context.Background())
	r := s.Stop()
	if sent, failed := r.Total(); sent != 5 || failed != 5 {
		t.Fatalf("%d sent, %d failed to a closed port; want 5 and 5", sent, failed)
	}
	if f := r.Failures(); len(f) != 1 || !strings.Contains(f[0], "connection refused") {
		t.Errorf("failures %q, want connection refused", f)
	}
}

func TestStartRefusesNoRate(t *testing.T) {
	if _, err := Start("http://127.0.0.1:1", "p", Options{}); err == nil || !strings.Contains(err.Error(), "rate 0") {
		t.Errorf("Start with no rate: %v", err)
	}
}

func TestWaitAnsweredNamesWhoNeverAnswered(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte([]string{"testapp a\n", "testapp b\n"}[n.Add(1)%2]))
	}))
	defer srv.Close()
	if err := WaitAnswered(context.Background(), srv.URL, []string{"testapp a", "testapp b"}); err != nil {
		t.Fatalf("both answer: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := WaitAnswered(ctx, srv.URL, []string{"testapp a", "testapp c"}); err == nil || !strings.Contains(err.Error(), "no answer from [testapp c]") {
		t.Errorf("c never answers: %v", err)
	}
}
