package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	apix "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/healer/admission"
)

// The answers the conversion webhook gives a review of one object over
// its bound: the object refused, or the review refused for want of room
// among the reviews being converted.
var (
	objectRefused = fmt.Sprintf("more than the %d bytes any stored request may take", admission.MaxConvertedObjectBytes)
	noRoom        = fmt.Sprintf("converts at most %d bytes of reviews at once", admission.MaxConversionBytes)
)

// forgedConversion is a ConversionReview of one request of ns to
// v1alpha1, whose status message is size bytes of '<' (six bytes once
// escaped as HTML).
func forgedConversion(t *testing.T, ns string, size int) []byte {
	t.Helper()
	object := rawJSON(t, &v1beta1.ContainerRecreateRequest{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1beta1.GroupVersion.String(), Kind: "ContainerRecreateRequest"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "forged"},
		Status:     v1beta1.ContainerRecreateRequestStatus{Message: strings.Repeat("<", size)},
	})
	return rawJSON(t, &apix.ConversionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: apix.SchemeGroupVersion.String(), Kind: "ConversionReview"},
		Request: &apix.ConversionRequest{UID: "forged", DesiredAPIVersion: v1beta1.GroupVersion.Group + "/v1alpha1",
			Objects: []runtime.RawExtension{{Raw: object}}},
	})
}

// rawJSON is v in JSON as the API server writes it: '<' is one byte, not
// the six of json.Marshal's HTML escape.
func rawJSON(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSpace(b.Bytes())
}

// floodConversions posts review to urls, in turn, from senders at once, as
// a caller with no rights that reaches the manager's port may (the API
// server presents no client certificate for conversions), each sender
// half a second apart, until stop is called. stop returns how many
// answers came of each kind: "object refused", "no room", or the status
// and start of any other answer.
func floodConversions(review []byte, urls []string, senders int) (stop func() map[string]int) {
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // a forger does not care whom it talks to
	}}
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	answers := map[string]int{}
	var sending sync.WaitGroup
	for i := range senders {
		sending.Go(func() {
			for n := i; ctx.Err() == nil; n++ {
				answer := postConversion(ctx, c, urls[n%len(urls)], review)
				if ctx.Err() != nil {
					return
				}
				mu.Lock()
				answers[answer]++
				mu.Unlock()
				select {
				case <-ctx.Done():
				case <-time.After(500 * time.Millisecond):
				}
			}
		})
	}
	return func() map[string]int {
		cancel()
		sending.Wait()
		return answers
	}
}

// postConversion posts review to url and says what kind of answer came.
func postConversion(ctx context.Context, c *http.Client, url string, review []byte) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(review))
	if err != nil {
		return err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return "error: " + err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode == http.StatusOK && strings.Contains(string(body), objectRefused):
		return "object refused"
	case resp.StatusCode == http.StatusServiceUnavailable && strings.Contains(string(body), noRoom):
		return "no room"
	}
	return fmt.Sprintf("%d %.200s", resp.StatusCode, body)
}

// checkConversionsRefused: the flood was answered, every answer a refusal
// naming a bound.
func checkConversionsRefused(t *testing.T, answers map[string]int) {
	t.Helper()
	if answers["object refused"] == 0 {
		t.Errorf("premise: no conversion review of the flood was answered with its object refused (%q): %v", objectRefused, answers)
	}
	for answer, n := range answers {
		if answer != "object refused" && answer != "no room" {
			t.Errorf("%d conversion reviews of 15 MiB were answered %q, want their object refused (%q) or no room (%q)", n, answer, objectRefused, noRoom)
		}
	}
}
