package signals

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// fakePrometheus answers each query with answers[query], or a bad_data error.
func fakePrometheus(t *testing.T, answers map[string]string) promv1.API {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
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
	return promv1.NewAPI(c)
}

func TestQueryMatchesSeriesToPodsAndContainers(t *testing.T) {
	api := fakePrometheus(t, map[string]string{
		"queue": `{"resultType":"vector","result":[
			{"metric":{"namespace":"shop","pod":"web-0"},"value":[1795000000,"12"]},
			{"metric":{"namespace":"shop","pod":"web-1","container":"app"},"value":[1795000000,"3.5"]},
			{"metric":{"namespace":"blog","pod":"web-2"},"value":[1795000000,"99"]},
			{"metric":{"namespace":"shop"},"value":[1795000000,"7"]},
			{"metric":{"namespace":"shop","pod":"web-3"},"value":[1795000000,"NaN"]}]}`,
		"range": `{"resultType":"matrix","result":[]}`,
	})
	q := &Querier{API: api}
	v := q.Query(context.Background(), "shop", []v1alpha1.Signal{
		{Name: "queue", Query: "queue"}, {Name: "bad", Query: "sum("}, {Name: "ranged", Query: "range"},
	}, time.Now())
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
	if got := v.Missing("web-0", "bad"); !strings.HasPrefix(got, "the query of signal bad failed: bad_data: 1:5: parse error") {
		t.Errorf("Missing(web-0, bad) = %q, want the query's error", got)
	}
	if got := v.Missing("web-0", "ranged"); got != "the query of signal ranged returned a matrix, not an instant vector" {
		t.Errorf("Missing(web-0, ranged) = %q", got)
	}
	if got := Unavailable([]string{"queue"}, "no Prometheus").Missing("web-0", "queue"); got != "no Prometheus" {
		t.Errorf("Unavailable: %q", got)
	}
}
