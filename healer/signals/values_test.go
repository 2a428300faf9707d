package signals

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// fakePrometheus answers each query with answers[query], or a bad_data
// error, and records the queries and timeouts it was sent.
type fakePrometheus struct {
	promv1.API
	mu       sync.Mutex
	queries  []string
	timeouts []string
}

func newFakePrometheus(t *testing.T, answers map[string]string) *fakePrometheus {
	f := &fakePrometheus{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		f.mu.Lock()
		f.queries = append(f.queries, r.Form.Get("query"))
		f.timeouts = append(f.timeouts, r.Form.Get("timeout"))
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		body, ok := answers[r.Form.Get("query")]
		if !ok {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"status":"error","errorType":"bad_data","error":"1:5: parse error: unexpected end of input"}`)
			return
		}
		fmt.Fprintf(w, `{"status":"success","data":%s}`, body)
	}))
	t.Cleanup(srv.Close)
	c, err := promapi.NewClient(promapi.Config{Address: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	f.API = promv1.NewAPI(c)
	return f
}

func TestQueryMatchesSeriesToPodsAndContainers(t *testing.T) {
	api := newFakePrometheus(t, map[string]string{
		`queue{namespace="shop"}`: `{"resultType":"vector","result":[
			{"metric":{"namespace":"shop","pod":"web-0"},"value":[1795000000,"12"]},
			{"metric":{"namespace":"shop","pod":"web-1","container":"app"},"value":[1795000000,"3.5"]},
			{"metric":{"namespace":"blog","pod":"web-2"},"value":[1795000000,"99"]},
			{"metric":{"namespace":"shop"},"value":[1795000000,"7"]},
			{"metric":{"namespace":"shop","pod":"web-3"},"value":[1795000000,"NaN"]}]}`,
		`range{namespace="shop"}`: `{"resultType":"matrix","result":[]}`,
	})
	q := &Querier{API: api, Timeout: 10 * time.Second}
	v := q.Query(context.Background(), "shop", []v1alpha1.Signal{
		{Name: "queue", Query: "queue"}, {Name: "bad", Query: "sum("}, {Name: "ranged", Query: "range"},
		{Name: "blogs", Query: `label_replace(queue{namespace="blog"}, "namespace", "shop", "", "")`},
	}, time.Now())
	// Only the scoped queries were sent, each with Prometheus' own timeout
	// (whole seconds: what is left of the 10 s).
	if want := []string{`queue{namespace="shop"}`, `range{namespace="shop"}`}; !slices.Equal(api.queries, want) {
		t.Errorf("queries sent %q, want %q", api.queries, want)
	}
	for _, timeout := range api.timeouts {
		if timeout != "9s" && timeout != "10s" {
			t.Errorf("timeout %q sent, want the 10 s left in whole seconds", timeout)
		}
	}
	if v.QueryTime() <= 0 {
		t.Error("the time Prometheus took to answer is not counted")
	}
	if got := v.Pod("web-0")["queue"]; got != 12 {
		t.Errorf("web-0's queue %v, want 12", got)
	}
	if got := v.Container("web-1", "app")["queue"]; got != 3.5 || v.Pod("web-1") != nil {
		t.Errorf("web-1's app queue %v (pod values %v), want 3.5 on the container alone", got, v.Pod("web-1"))
	}
	for pod, want := range map[string]string{
		"web-0": "",
		"web-1": "",
		"web-2": "the query of signal queue returned no series for the pod", // another namespace's
		"web-3": "the query of signal queue returned no series for the pod", // NaN
	} {
		if got := v.Missing(pod, "queue"); got != want {
			t.Errorf("Missing(%s, queue) = %q, want %q", pod, got, want)
		}
	}
	if got := v.Missing("web-0", "bad"); !strings.HasPrefix(got, "the query of signal bad is not sent: not PromQL: 1:5: parse error") {
		t.Errorf("Missing(web-0, bad) = %q, want the parse error", got)
	}
	if got := v.Missing("web-0", "blogs"); !strings.HasPrefix(got, `the query of signal blogs is not sent: selector queue{namespace="blog"} reads no series of namespace shop`) {
		t.Errorf("Missing(web-0, blogs) = %q, want the query refused for reading namespace blog", got)
	}
	if got := v.Missing("web-0", "ranged"); got != "the query of signal ranged returned a matrix, not an instant vector" {
		t.Errorf("Missing(web-0, ranged) = %q", got)
	}
	if got := Unavailable([]string{"queue"}, "no Prometheus").Missing("web-0", "queue"); got != "no Prometheus" {
		t.Errorf("Unavailable: %q", got)
	}
}

// TestAnUnreachablePrometheusCostsThePolicyNothing: time lost to a
// Prometheus that does not answer is not counted in the policy's budget.
func TestAnUnreachablePrometheusCostsThePolicyNothing(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.URL
	srv.Close()
	c, err := promapi.NewClient(promapi.Config{Address: addr})
	if err != nil {
		t.Fatal(err)
	}
	v := (&Querier{API: promv1.NewAPI(c), Timeout: time.Second}).Query(context.Background(), "shop", []v1alpha1.Signal{{Name: "queue", Query: "queue"}}, time.Now())
	if v.QueryTime() != 0 || !strings.Contains(v.Missing("web-0", "queue"), "connection refused") {
		t.Errorf("query time %s, missing %q; want 0 and the connection's error", v.QueryTime(), v.Missing("web-0", "queue"))
	}
}
