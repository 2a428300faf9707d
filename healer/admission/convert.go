package admission

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"golang.org/x/sync/semaphore"
	apix "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
	webhookconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"
)

// Bounds of the CRD conversion webhook. The API server presents no client
// certificate for conversions, so the webhook cannot tell it from anyone
// else who reaches the port: instead of trusting its caller it bounds the
// work a review may cost.
const (
	// MaxConversionBytes bounds the body of a conversion review (admission
	// reviews are bounded by controller-runtime, at 7 MiB): a page of 500
	// requests (what kubectl and informers ask for), each at most
	// v1beta1.MaxRequestBytes.
	MaxConversionBytes = 16 << 20
	// MaxConvertedObjectBytes bounds one object of a review: no stored
	// request is larger, etcd's default --max-request-bytes being 1.5 MiB.
	MaxConvertedObjectBytes = 3 << 19
	// conversionWait is how long a review waits for the bytes it needs
	// while others are converted, before it is refused.
	conversionWait = 10 * time.Second
	// conversionRead is how long a review's body may take to arrive once
	// it holds its bytes: the API server sends 16 MiB far faster, and a
	// sender that stalls would otherwise hold them for as long as it likes.
	conversionRead = 5 * time.Second
)

// converter serves CRD conversion reviews. Unlike controller-runtime's
// handler, it converts at most MaxConversionBytes of reviews at once
// (weighed by their bodies), reads each body within conversionRead, refuses an object over
// MaxConvertedObjectBytes before decoding it, and writes the converted
// objects without escaping HTML characters ('<' is six bytes escaped) and
// without a second copy of the response: a review's memory stays a small
// multiple of its body.
type converter struct {
	scheme  *runtime.Scheme
	decoder *webhookconversion.Decoder
	budget  *semaphore.Weighted
}

func newConverter(scheme *runtime.Scheme) *converter {
	return &converter{scheme: scheme, decoder: webhookconversion.NewDecoder(scheme), budget: semaphore.NewWeighted(MaxConversionBytes)}
}

// ServeHTTP implements http.Handler.
func (c *converter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength > MaxConversionBytes {
		http.Error(w, fmt.Sprintf("the conversion review is %d bytes, more than the %d bytes the conversion webhook reads", r.ContentLength, MaxConversionBytes), http.StatusRequestEntityTooLarge)
		return
	}
	weight := r.ContentLength
	if weight < 0 { // unknown: as much as may come
		weight = MaxConversionBytes
	}
	ctx, cancel := context.WithTimeout(r.Context(), conversionWait)
	defer cancel()
	if err := c.budget.Acquire(ctx, weight); err != nil {
		w.Header().Set("Retry-After", "1")
		http.Error(w, fmt.Sprintf("the conversion webhook converts at most %d bytes of reviews at once and had no room for this one's %d within %s", MaxConversionBytes, weight, conversionWait), http.StatusServiceUnavailable)
		return
	}
	defer c.budget.Release(weight)
	if err := http.NewResponseController(w).SetReadDeadline(time.Now().Add(conversionRead)); err != nil {
		http.Error(w, fmt.Sprintf("bound the time the conversion review may take to read: %v", err), http.StatusInternalServerError)
		return
	}

	body := bytes.NewBuffer(make([]byte, 0, weight))
	if _, err := body.ReadFrom(http.MaxBytesReader(w, r.Body, weight)); err != nil {
		code := http.StatusBadRequest
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			code = http.StatusRequestEntityTooLarge
		case errors.Is(err, os.ErrDeadlineExceeded):
			code = http.StatusRequestTimeout
		}
		http.Error(w, fmt.Sprintf("read the conversion review (at most %d bytes, within %s): %v", MaxConversionBytes, conversionRead, err), code)
		return
	}
	review := &apix.ConversionReview{}
	err := json.Unmarshal(body.Bytes(), review)
	body = nil // the objects' raw bytes are copies
	if err == nil && review.Request == nil {
		err = errors.New("it has no request")
	}
	if err != nil {
		http.Error(w, fmt.Sprintf("decode the conversion review: %v", err), http.StatusBadRequest)
		return
	}
	converted, err := c.convert(review.Request)
	if err != nil {
		ctrl.LoggerFrom(r.Context()).Info("cannot convert", "review", review.Request.UID, "error", err.Error())
		writeConversionFailure(w, review.Request.UID, err)
		return
	}
	writeConverted(w, review.Request.UID, converted)
}

// convert converts every object of req, forgetting each one's raw bytes
// once decoded.
func (c *converter) convert(req *apix.ConversionRequest) (out []runtime.Object, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error during conversion: %v", r)
		}
	}()
	to, err := schema.ParseGroupVersion(req.DesiredAPIVersion)
	if err != nil {
		return nil, fmt.Errorf("desiredAPIVersion %q: %w", req.DesiredAPIVersion, err)
	}
	for i := range req.Objects {
		if n := len(req.Objects[i].Raw); n > MaxConvertedObjectBytes {
			return nil, fmt.Errorf("objects[%d] is %d bytes, more than the %d bytes any stored request may take", i, n, MaxConvertedObjectBytes)
		}
	}
	out = make([]runtime.Object, 0, len(req.Objects))
	for i := range req.Objects {
		src, gvk, err := c.decoder.Decode(req.Objects[i].Raw)
		if err != nil {
			return nil, fmt.Errorf("decode objects[%d]: %w", i, err)
		}
		req.Objects[i].Raw = nil
		dst, err := c.convertObject(src, to.WithKind(gvk.Kind))
		if err != nil {
			return nil, fmt.Errorf("convert objects[%d] from %s to %s: %w", i, gvk.GroupVersion(), to, err)
		}
		out = append(out, dst)
	}
	return out, nil
}

// convertObject converts src, a hub or one of its spokes, to version to.
func (c *converter) convertObject(src runtime.Object, to schema.GroupVersionKind) (runtime.Object, error) {
	dst, err := c.scheme.New(to)
	if err != nil {
		return nil, err
	}
	t, err := meta.TypeAccessor(dst)
	if err != nil {
		return nil, err
	}
	t.SetAPIVersion(to.GroupVersion().String())
	t.SetKind(to.Kind)
	hub, srcIsHub := src.(conversion.Hub)
	spoke, dstIsSpoke := dst.(conversion.Convertible)
	if srcIsHub && dstIsSpoke {
		return dst, spoke.ConvertFrom(hub)
	}
	spoke, srcIsSpoke := src.(conversion.Convertible)
	hub, dstIsHub := dst.(conversion.Hub)
	if srcIsSpoke && dstIsHub {
		return dst, spoke.ConvertTo(hub)
	}
	return nil, fmt.Errorf("%T does not convert to %T: only between the hub and a spoke", src, dst)
}

// writeConverted writes a successful review, one object at a time.
func writeConverted(w http.ResponseWriter, uid types.UID, objects []runtime.Object) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	quoted, _ := json.Marshal(string(uid))
	_, _ = fmt.Fprintf(w, `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","response":{"uid":%s,"result":{"status":%q,"metadata":{}},"convertedObjects":[`,
		quoted, metav1.StatusSuccess)
	for i, o := range objects {
		if i > 0 {
			_, _ = io.WriteString(w, ",")
		}
		objects[i] = nil
		if err := enc.Encode(o); err != nil {
			return // the API server reads a cut response as a failure
		}
	}
	_, _ = io.WriteString(w, "]}}\n")
}

// writeConversionFailure answers a review that cannot be converted.
func writeConversionFailure(w http.ResponseWriter, uid types.UID, err error) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&apix.ConversionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: apix.SchemeGroupVersion.String(), Kind: "ConversionReview"},
		Response: &apix.ConversionResponse{UID: uid, Result: metav1.Status{Status: metav1.StatusFailure, Message: err.Error()}},
	})
}
