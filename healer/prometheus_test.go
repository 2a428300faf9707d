package healer

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestPrometheusClientSendsTheTokenOfTheDay: the client checks the
// server's certificate against --prometheus-ca-file and sends the token
// in --prometheus-bearer-token-file as it is at each query.
func TestPrometheusClientSendsTheTokenOfTheDay(t *testing.T) {
	var got []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[]}}`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	token := filepath.Join(dir, "token")
	if err := os.WriteFile(token, []byte("first\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	api, err := PrometheusOptions{URL: srv.URL, CAFile: ca, BearerTokenFile: token, Timeout: 5 * time.Second}.api()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := api.Query(context.Background(), "up", time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(token, []byte("second"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := api.Query(context.Background(), "up", time.Now()); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != "Bearer first" || got[1] != "Bearer second" {
		t.Errorf("Authorization headers %q, want the token of each moment", got)
	}
	// Without the CA, the server's certificate is refused.
	api, err = PrometheusOptions{URL: srv.URL, Timeout: 5 * time.Second}.api()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := api.Query(context.Background(), "up", time.Now()); err == nil {
		t.Error("a certificate from an unknown CA was accepted")
	}
}
