package healer

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"strings"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
)

// api is the Prometheus HTTP API client the options describe: the CA or no
// check of the certificate, a bearer token read from its file for every
// query, and the timeout on every query.
func (o PrometheusOptions) api() (promv1.API, error) {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: o.InsecureSkipVerify} //nolint:gosec // the operator's choice, --prometheus-insecure-skip-verify
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("--prometheus-ca-file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--prometheus-ca-file: %s holds no PEM certificate", o.CAFile)
		}
		transport.TLSClientConfig.RootCAs = pool
	}
	var rt http.RoundTripper = transport
	if o.BearerTokenFile != "" {
		if _, err := os.ReadFile(o.BearerTokenFile); err != nil {
			return nil, fmt.Errorf("--prometheus-bearer-token-file: %w", err)
		}
		rt = bearerFromFile{file: o.BearerTokenFile, next: transport}
	}
	c, err := promapi.NewClient(promapi.Config{Address: o.URL, Client: &http.Client{Transport: rt, Timeout: o.Timeout}})
	if err != nil {
		return nil, fmt.Errorf("configure the Prometheus client for %s: %w", o.URL, err)
	}
	return promv1.NewAPI(c), nil
}

// bearerFromFile sends the token in file with every request, read again
// each time: a projected ServiceAccount token is rotated in place.
type bearerFromFile struct {
	file string
	next http.RoundTripper
}

func (b bearerFromFile) RoundTrip(r *http.Request) (*http.Response, error) {
	token, err := os.ReadFile(b.file)
	if err != nil {
		return nil, fmt.Errorf("read the Prometheus bearer token: %w", err)
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	return b.next.RoundTrip(r)
}
