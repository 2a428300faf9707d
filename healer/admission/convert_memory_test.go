package admission

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	apix "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/rejuv-dev/rejuv/api/apps"
	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// managerMemoryLimit is the manager's memory limit (config/manager).
const managerMemoryLimit = 256 << 20

// TestForgedConversionReviewsStayWithinTheManagersMemory: the conversion
// webhook cannot know its caller (the API server presents no client
// certificate for conversions), so anyone who reaches the port may send
// reviews. Four at once, each just under the body bound with condition
// messages of '<' (which HTML-escaping JSON encoders write as six bytes),
// in one object or in objects as large as a stored request may be, must
// not take the handler's heap anywhere near the manager's limit.
func TestForgedConversionReviewsStayWithinTheManagersMemory(t *testing.T) {
	front := conversionServer(t)
	// The heap measured is the live heap, give or take a tenth: the
	// manager's GOMEMLIMIT makes its collector as eager near the limit.
	defer debug.SetGCPercent(debug.SetGCPercent(10))

	for _, tt := range []struct {
		name          string
		objects, size int
		want          string // in every response
	}{
		{"one object of 15 MiB", 1, 15 << 20, "more than the 1572864 bytes any stored request may take"},
		{"ten objects at the per-object bound", 10, MaxConvertedObjectBytes - 1024, `"status":"Success"`},
	} {
		body := forgedConversionReview(t, tt.objects, tt.size)
		if len(body) > MaxConversionBytes {
			t.Fatalf("%s: the review is %s, over the body bound", tt.name, mib(int64(len(body))))
		}
		const concurrent = 4
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		peak := watchHeap()
		var wg sync.WaitGroup
		answers := make([]string, concurrent)
		for i := range concurrent {
			wg.Go(func() {
				resp, err := http.Post(front.URL+ConvertPath, "application/json", bytes.NewReader(body))
				if err != nil {
					answers[i] = err.Error()
					return
				}
				defer resp.Body.Close()
				head := make([]byte, 1024)
				n, _ := io.ReadFull(resp.Body, head)
				rest, _ := io.Copy(io.Discard, resp.Body)
				answers[i] = fmt.Sprintf("%s, %s: %s", resp.Status, mib(int64(n)+rest), head[:n])
			})
		}
		wg.Wait()
		top := peak()
		grew := int64(top) - int64(before.HeapAlloc)
		t.Logf("%s: %d reviews of %s at once; heap %s before, %s at its peak (+%s)", tt.name, concurrent, mib(int64(len(body))),
			mib(int64(before.HeapAlloc)), mib(int64(top)), mib(grew))
		for i, a := range answers {
			t.Logf("review %d: %s", i, a)
			if !strings.Contains(a, tt.want) {
				t.Errorf("%s: review %d answered %q, want %q in it", tt.name, i, a, tt.want)
			}
		}
		// The manager's own caches and controllers need most of its
		// limit; the conversions of forged reviews get at most a quarter.
		if grew > managerMemoryLimit/4 {
			t.Errorf("%s: the handler's heap grew by %s serving %d forged reviews, more than a quarter of the manager's %s limit", tt.name, mib(grew), concurrent, mib(managerMemoryLimit))
		}
	}
}

// forgedConversionReview is a review of n v1beta1 requests, each about
// size bytes, whose condition message is all '<', to convert to v1alpha1.
func forgedConversionReview(t *testing.T, n, size int) []byte {
	t.Helper()
	crr := &v1beta1.ContainerRecreateRequest{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1beta1.GroupVersion.String(), Kind: "ContainerRecreateRequest"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "forged"},
		Status: v1beta1.ContainerRecreateRequestStatus{Conditions: []metav1.Condition{{
			Type: "Forged", Status: metav1.ConditionTrue, Reason: "Forged", Message: strings.Repeat("<", size),
		}}},
	}
	enc := &bytes.Buffer{}
	e := json.NewEncoder(enc)
	e.SetEscapeHTML(false)
	if err := e.Encode(crr); err != nil {
		t.Fatal(err)
	}
	objects := make([]k8sruntime.RawExtension, n)
	for i := range objects {
		objects[i].Raw = enc.Bytes()
	}
	review := apix.ConversionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "ConversionReview"},
		Request:  &apix.ConversionRequest{UID: "forged", DesiredAPIVersion: "apps.kruise.io/v1alpha1", Objects: objects},
	}
	out := &bytes.Buffer{}
	e = json.NewEncoder(out)
	e.SetEscapeHTML(false)
	if err := e.Encode(review); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// watchHeap samples the heap until the returned function is called, which
// returns the largest HeapAlloc seen.
func watchHeap() func() uint64 {
	var top uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			top = max(top, m.HeapAlloc)
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-stopped
		return top
	}
}

// conversionServer serves the webhooks as Register sets them up, with no
// callers checked, over plain HTTP.
func conversionServer(t *testing.T) *httptest.Server {
	t.Helper()
	s, err := apps.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	server := webhook.NewServer(webhook.Options{})
	Register(server, s, Options{})
	front := httptest.NewServer(server.WebhookMux())
	t.Cleanup(front.Close)
	return front
}

// mib writes n bytes in MiB.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// TestASlowReviewDoesNotHoldTheConversionWebhook: a sender that announces
// a review of the body bound and then sends nothing more must not hold the
// webhook's budget for longer than a review takes to read: a review sent
// meanwhile is converted.
func TestASlowReviewDoesNotHoldTheConversionWebhook(t *testing.T) {
	front := conversionServer(t)

	conn, err := net.Dial("tcp", strings.TrimPrefix(front.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", ConvertPath, MaxConversionBytes); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the stalled review takes the budget first

	start := time.Now()
	body := forgedConversionReview(t, 1, 100)
	resp, err := http.Post(front.URL+ConvertPath, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	t.Logf("a review sent while another stalls: %s after %s", resp.Status, time.Since(start).Round(time.Millisecond))
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(answer), `"status":"Success"`) {
		t.Errorf("a review sent while another stalls: %s %.300s, want it converted", resp.Status, answer)
	}
}
