package kube

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// apiServer records the requests it gets and answers with their body.
type apiServer struct {
	mu       sync.Mutex
	requests []string
	bodies   chan []byte
}

func (a *apiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	a.mu.Lock()
	a.requests = append(a.requests, r.Method+" "+r.URL.Path)
	a.mu.Unlock()
	a.bodies <- body
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

func newAPIServer(t *testing.T) (*apiServer, *Client) {
	t.Helper()
	a := &apiServer{bodies: make(chan []byte, 10)}
	srv := httptest.NewServer(a)
	t.Cleanup(srv.Close)
	c, err := New(&rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{ContentType: "application/json"}})
	if err != nil {
		t.Fatal(err)
	}
	return a, c
}

func TestUpdateRequestStatus(t *testing.T) {
	a, c := newAPIServer(t)
	crr := &v1beta1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "r1", ResourceVersion: "7"},
		Status:     v1beta1.ContainerRecreateRequestStatus{Phase: v1beta1.PhaseRecreating},
	}
	got, err := c.UpdateRequestStatus(context.Background(), crr)
	if err != nil {
		t.Fatal(err)
	}
	if want := "PUT /apis/apps.kruise.io/v1beta1/namespaces/shop/containerrecreaterequests/r1/status"; a.requests[0] != want {
		t.Errorf("request %q, want %q", a.requests[0], want)
	}
	if got.Status.Phase != v1beta1.PhaseRecreating || got.ResourceVersion != "7" {
		t.Errorf("stored object %+v, want the status and resourceVersion sent", got)
	}
}

func TestRecorderWritesEventsV1(t *testing.T) {
	a, c := newAPIServer(t)
	ctx := t.Context()
	r := NewRecorder(c, "rejuv-daemon", "rejuv-daemon-node-a", logr.Discard())
	go r.Run(ctx)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-0", UID: "pod-uid"}}
	crr := &v1beta1.ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "r1", UID: "crr-uid"}}
	before := time.Now()
	r.Eventf(crr, pod, corev1.EventTypeNormal, "StoppingContainer", "Recreate", "stopping %s", "app")
	var body []byte
	select {
	case body = <-a.bodies:
	case <-time.After(10 * time.Second):
		t.Fatal("no event written")
	}
	if want := "POST /apis/events.k8s.io/v1/namespaces/shop/events"; a.requests[0] != want {
		t.Errorf("request %q, want %q", a.requests[0], want)
	}
	e := &eventsv1.Event{}
	if err := json.Unmarshal(body, e); err != nil {
		t.Fatal(err)
	}
	if e.Regarding.Kind != "ContainerRecreateRequest" || e.Regarding.APIVersion != "apps.kruise.io/v1beta1" || e.Regarding.UID != "crr-uid" ||
		e.Related == nil || e.Related.Kind != "Pod" || e.Related.APIVersion != "v1" || e.Related.Name != "web-0" {
		t.Errorf("regarding %+v related %+v, want the request and its pod", e.Regarding, e.Related)
	}
	if e.Reason != "StoppingContainer" || e.Action != "Recreate" || e.Note != "stopping app" || e.Type != corev1.EventTypeNormal ||
		e.ReportingController != "rejuv-daemon" || e.ReportingInstance != "rejuv-daemon-node-a" || !strings.HasPrefix(e.Name, "r1.") {
		t.Errorf("event %+v", e)
	}
	if at := e.EventTime.Time; at.Before(before.Truncate(time.Microsecond)) || at.After(time.Now()) {
		t.Errorf("eventTime %s, want the moment Eventf was called", e.EventTime)
	}
}

func TestCheckServed(t *testing.T) {
	for _, tt := range []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"served", http.StatusOK, `{"kind":"APIResourceList","groupVersion":"apps.kruise.io/v1beta1","resources":[{"name":"containerrecreaterequests","namespaced":true,"kind":"ContainerRecreateRequest","verbs":["get"]},{"name":"containerrecreaterequests/status","namespaced":true,"kind":"ContainerRecreateRequest","verbs":["update"]}]}`, ""},
		{"no CRD", http.StatusNotFound, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`, "does not serve apps.kruise.io/v1beta1: install Rejuv's CustomResourceDefinitions (config/crd) first"},
		{"another CRD of the group", http.StatusOK, `{"kind":"APIResourceList","groupVersion":"apps.kruise.io/v1beta1","resources":[{"name":"clonesets","namespaced":true,"kind":"CloneSet","verbs":["get"]}]}`, "without containerrecreaterequests/status"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/apis/apps.kruise.io/v1beta1" {
					http.NotFound(w, r)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			c, err := New(&rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{ContentType: "application/json"}})
			if err != nil {
				t.Fatal(err)
			}
			err = c.CheckServed(t.Context())
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}
