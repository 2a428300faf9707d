package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"time"
)

// forge posts body to every one of urls, count times each (as fast as the
// answers come), as a pod that sends forged AdmissionReviews to a webhook
// would: over HTTPS without checking the server's certificate, and without
// a client certificate. It prints one line per URL and answer: how many
// times it came, then the status and the body, or the error.
func forge(ctx context.Context, urls []string, body string, count int, out io.Writer) {
	c := &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // a forger does not care whom it talks to
	}
	for _, url := range urls {
		seen := map[string]int{}
		var order []string
		for range count {
			answer := post(ctx, c, url, body)
			if seen[answer] == 0 {
				order = append(order, answer)
			}
			seen[answer]++
		}
		for _, a := range order {
			fmt.Fprintf(out, "forged %s x%d: %s\n", url, seen[a], a)
		}
	}
}

// post sends body once and says what came back.
func post(ctx context.Context, c *http.Client, url, body string) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewBufferString(body))
	if err != nil {
		return "error " + err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return "error " + err.Error()
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return fmt.Sprintf("%d %s", resp.StatusCode, bytes.TrimSpace(got))
}
