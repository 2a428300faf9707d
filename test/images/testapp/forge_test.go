package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestForgeCountsEachAnswer: the forger posts the body to each URL the
// given number of times over unverified HTTPS and prints each distinct
// answer once, with how often it came.
func TestForgeCountsEachAnswer(t *testing.T) {
	n := 0
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		n++
		if n%2 == 0 {
			http.Error(w, "refused "+string(body), http.StatusForbidden)
			return
		}
		_, _ = w.Write([]byte("ok " + string(body)))
	}))
	defer srv.Close()
	var out strings.Builder
	forge(t.Context(), []string{srv.URL + "/a"}, `{"x":1}`, 4, &out)
	want := "forged " + srv.URL + `/a x2: 200 ok {"x":1}` + "\n" + "forged " + srv.URL + `/a x2: 403 refused {"x":1}` + "\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}
