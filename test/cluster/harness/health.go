package harness

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func itoa(i int) string { return strconv.Itoa(i) }

// httpCheck returns a check that GETs url and wants 200 (and, when set, a
// body containing want).
func httpCheck(client *http.Client, url, want string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
		}
		if want != "" && !strings.Contains(string(body), want) {
			return fmt.Errorf("GET %s: body %q lacks %q", url, strings.TrimSpace(string(body)), want)
		}
		return nil
	}
}

func plainClient() *http.Client {
	return &http.Client{Timeout: 2 * time.Second}
}

// insecureClient is for the health endpoints of components that serve a
// self-signed certificate; nothing but their health is read through it.
func insecureClient() *http.Client {
	return &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // health probe of a local self-signed endpoint
	}}
}

// adminClient talks to the apiserver with the admin certificate.
func adminClient(cfg Config) (*http.Client, error) {
	pool := x509.NewCertPool()
	ca, err := os.ReadFile(filepath.Join(cfg.pkiDir(), "ca.crt"))
	if err != nil {
		return nil, err
	}
	pool.AppendCertsFromPEM(ca)
	cert, err := tls.LoadX509KeyPair(filepath.Join(cfg.pkiDir(), "admin.crt"), filepath.Join(cfg.pkiDir(), "admin.key"))
	if err != nil {
		return nil, err
	}
	return &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
	}}, nil
}
