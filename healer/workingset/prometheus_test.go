package workingset

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
)

const cid = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestContainerIDOf(t *testing.T) {
	for cgroup, want := range map[string]string{
		"/kubepods/burstable/pod1234/" + cid:                                      cid,
		"/kubepods.slice/kubepods-pod1234.slice/cri-containerd-" + cid + ".scope": cid,
		"/system.slice/crio-" + cid + ".scope":                                    cid,
		"/kubepods/burstable/pod1234":                                             "",
		"/":                                                                       "",
	} {
		if got := containerIDOf(cgroup); got != want {
			t.Errorf("containerIDOf(%q) = %q, want %q", cgroup, got, want)
		}
	}
}

// TestPrometheusReadsRawSamples: the source asks for the raw samples of a
// namespace's containers as a range vector, and a sample keeps each
// series' newest, with the series' container ID.
func TestPrometheusReadsRawSamples(t *testing.T) {
	var asked string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		asked = r.Form.Get("query")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":"matrix","result":[
			{"metric":{"__name__":"container_memory_working_set_bytes","namespace":"shop","pod":"web-0","container":"app","id":"/kubepods/pod1/%s"},
			 "values":[[1795000000,"1048576"],[1795000015,"2097152"]]},
			{"metric":{"__name__":"container_memory_working_set_bytes","namespace":"shop","pod":"web-0","container":"","id":"/kubepods/pod1"},
			 "values":[[1795000015,"9999999"]]}
		]}}`, cid)
	}))
	defer srv.Close()
	client, err := promapi.NewClient(promapi.Config{Address: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	p := Prometheus{API: promv1.NewAPI(client), Interval: 30 * time.Second}
	got, err := p.Sample(context.Background(), "shop")
	if err != nil {
		t.Fatal(err)
	}
	want := Sample{Pod: "web-0", Container: "app", ContainerID: cid, Time: time.Unix(1795000015, 0), Bytes: 2 << 20}
	if len(got) != 1 || !got[0].Time.Equal(want.Time) || got[0].Bytes != want.Bytes || got[0].ContainerID != cid {
		t.Errorf("samples %+v, want %+v (the pod-level series without a container left out)", got, want)
	}
	if wantQuery := `container_memory_working_set_bytes{namespace="shop",container!="",container!="POD"}[60s]`; asked != wantQuery {
		t.Errorf("query %q, want %q", asked, wantQuery)
	}
	history, err := p.History(context.Background(), "shop", time.Now().Add(-time.Hour), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(history) != 2 || !strings.HasSuffix(asked, "[3600s]") {
		t.Errorf("history %+v from query %q, want both samples of an hour", history, asked)
	}
}
