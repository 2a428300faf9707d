package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// get requests path from srv and returns the status code and body.
func get(t *testing.T, srv *httptest.Server, method, path string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

func TestControlChangesProbes(t *testing.T) {
	tests := []struct {
		name        string
		control     string
		wantHealthz int
		wantReadyz  int
	}{
		{name: "defaults", wantHealthz: 200, wantReadyz: 200},
		{name: "not ready", control: "ready=false", wantHealthz: 200, wantReadyz: 503},
		{name: "not live", control: "live=false", wantHealthz: 503, wantReadyz: 200},
		{name: "neither", control: "ready=false&live=false", wantHealthz: 503, wantReadyz: 503},
		{name: "back again", control: "ready=false&live=false&ready=true&live=true", wantHealthz: 200, wantReadyz: 200},
	}
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		for _, tt := range tests {
			t.Run(method+" "+tt.name, func(t *testing.T) {
				srv := httptest.NewServer(testApp(t, defaultOptions(t)).routes())
				defer srv.Close()
				if tt.control != "" {
					if code, body := get(t, srv, method, "/control?"+tt.control); code != http.StatusOK {
						t.Fatalf("/control?%s = %d %s", tt.control, code, body)
					}
				}
				if code, _ := get(t, srv, http.MethodGet, "/healthz"); code != tt.wantHealthz {
					t.Errorf("/healthz = %d, want %d", code, tt.wantHealthz)
				}
				if code, _ := get(t, srv, http.MethodGet, "/readyz"); code != tt.wantReadyz {
					t.Errorf("/readyz = %d, want %d", code, tt.wantReadyz)
				}
			})
		}
	}
}

func TestControlRejectsBadValues(t *testing.T) {
	tests := []struct {
		query   string
		key     string
		value   string
		message string
	}{
		{query: "ready=maybe", key: "ready", value: "maybe", message: "true or false"},
		{query: "live=1", key: "live", value: "1", message: "true or false"},
		{query: "ignoreSigterm=", key: "ignoreSigterm", value: "", message: "true or false"},
		{query: "growRate=fast", key: "growRate", value: "fast"},
		{query: "growLimit=-5Mi", key: "growLimit", value: "-5Mi", message: "negative"},
		{query: "exit=-1", key: "exit", value: "-1", message: "0 to 255"},
		{query: "free=please", key: "free", value: "please"},
		{query: "ready=false&speed=11", key: "speed", value: "11", message: "unknown key"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			a := testApp(t, defaultOptions(t))
			srv := httptest.NewServer(a.routes())
			defer srv.Close()
			code, body := get(t, srv, http.MethodPost, "/control?"+tt.query)
			if code != http.StatusBadRequest {
				t.Fatalf("/control?%s = %d, want 400", tt.query, code)
			}
			for _, want := range []string{tt.key, `"` + tt.value + `"`, tt.message} {
				if !strings.Contains(body, want) {
					t.Errorf("answer %q does not name %q", body, want)
				}
			}
			if s := a.state.get(); !s.ready || !s.live || s.ignoreSigterm {
				t.Errorf("a rejected control changed the state: %+v", s)
			}
			select {
			case c := <-a.exits:
				t.Errorf("a rejected control asked to exit with %d", c)
			default:
			}
		})
	}
}

func TestControlExitAndMethod(t *testing.T) {
	a := testApp(t, defaultOptions(t))
	srv := httptest.NewServer(a.routes())
	defer srv.Close()
	if code, _ := get(t, srv, http.MethodPut, "/control?ready=false"); code != http.StatusMethodNotAllowed {
		t.Errorf("PUT /control = %d, want 405", code)
	}
	if code, body := get(t, srv, http.MethodPost, "/control?exit=7"); code != http.StatusOK {
		t.Fatalf("/control?exit=7 = %d %s", code, body)
	}
	select {
	case c := <-a.exits:
		if c != 7 {
			t.Errorf("exit code %d, want 7", c)
		}
	default:
		t.Error("/control?exit=7 did not ask to exit")
	}
}

func TestStateAndRoot(t *testing.T) {
	a := testApp(t, options{ready: true, ignoreSigterm: true, growRate: 1 << 20, growLimit: 4 << 20})
	a.ballast.grow(8192, 0)
	srv := httptest.NewServer(a.routes())
	defer srv.Close()

	code, body := get(t, srv, http.MethodGet, "/state")
	if code != http.StatusOK {
		t.Fatalf("/state = %d %s", code, body)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("/state is not JSON: %v\n%s", err, body)
	}
	want := map[string]any{
		"ready": true, "live": false, "ignoreSigterm": true,
		"growRate": float64(1 << 20), "growLimit": float64(4 << 20), "heldBytes": float64(8192),
		"startedAt": "2026-01-02T03:04:05.000000006Z", "hostname": "test-host",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("/state %s = %v, want %v", k, got[k], v)
		}
	}
	if pid, ok := got["pid"].(float64); !ok || pid <= 0 {
		t.Errorf("/state pid = %v, want a process id", got["pid"])
	}

	if code, body := get(t, srv, http.MethodGet, "/"); code != http.StatusOK || body != "testapp test-host\n" {
		t.Errorf("/ = %d %q, want 200 %q", code, body, "testapp test-host\n")
	}
	if code, _ := get(t, srv, http.MethodGet, "/nothing-here"); code != http.StatusNotFound {
		t.Errorf("/nothing-here = %d, want 404", code)
	}
}

func TestMetrics(t *testing.T) {
	a := testApp(t, defaultOptions(t))
	a.ballast.grow(4096, 0)
	srv := httptest.NewServer(a.routes())
	defer srv.Close()
	get(t, srv, http.MethodGet, "/healthz")
	get(t, srv, http.MethodGet, "/control?live=false")
	get(t, srv, http.MethodGet, "/healthz")
	get(t, srv, http.MethodGet, "/healthz")
	get(t, srv, http.MethodGet, "/nowhere")

	code, body := get(t, srv, http.MethodGet, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics = %d", code)
	}
	for _, want := range []string{
		`testapp_requests_total{code="200",path="/healthz"} 1`,
		`testapp_requests_total{code="503",path="/healthz"} 2`,
		`testapp_requests_total{code="200",path="/control"} 1`,
		`testapp_requests_total{code="404",path="other"} 1`,
		"testapp_errors_total 2",
		"testapp_held_bytes 4096",
		"go_goroutines ",
		"process_resident_memory_bytes ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
