package admission

import (
	"context"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// refused counts what the webhooks refuse. controller-runtime counts
// their requests and latency, by HTTP code, which is 200 for a refusal
// too.
var refused = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "rejuv_webhook_refusals_total",
	Help: "Admission requests a webhook refused, by webhook (its path, as controller-runtime's webhook metrics name it) and reason (Invalid, Forbidden, BadRequest, InternalError or Denied).",
}, []string{"webhook", "reason"})

// RegisterMetrics adds the webhooks' metrics to reg.
func RegisterMetrics(reg prometheus.Registerer) {
	reg.MustRegister(refused)
}

// refusalReasons are the reasons refusalReason gives.
var refusalReasons = []string{
	string(metav1.StatusReasonInvalid), string(metav1.StatusReasonForbidden), string(metav1.StatusReasonBadRequest),
	string(metav1.StatusReasonInternalError), "Denied",
}

// initRefusals makes a webhook's refusal counters exist at 0, so that a
// rate or an increase over them counts its first refusal too.
func initRefusals(path string) {
	for _, reason := range refusalReasons {
		refused.WithLabelValues(path, reason)
	}
}

// counted is an admission handler whose refusals are counted.
type counted struct {
	path string
	admission.Handler
}

// Handle answers and counts a refusal.
func (c counted) Handle(ctx context.Context, req admission.Request) admission.Response {
	resp := c.Handler.Handle(ctx, req)
	if !resp.Allowed {
		refused.WithLabelValues(c.path, refusalReason(resp)).Inc()
	}
	return resp
}

// refusalReason names why a response refuses, from a few values: its
// status reason when it is one of them, else its code's.
func refusalReason(resp admission.Response) string {
	if resp.Result == nil {
		return "Denied"
	}
	switch resp.Result.Reason {
	case metav1.StatusReasonInvalid, metav1.StatusReasonForbidden, metav1.StatusReasonBadRequest, metav1.StatusReasonInternalError:
		return string(resp.Result.Reason)
	}
	switch resp.Result.Code {
	case http.StatusUnprocessableEntity:
		return string(metav1.StatusReasonInvalid)
	case http.StatusForbidden:
		return string(metav1.StatusReasonForbidden)
	case http.StatusBadRequest:
		return string(metav1.StatusReasonBadRequest)
	case http.StatusInternalServerError:
		return string(metav1.StatusReasonInternalError)
	}
	return "Denied"
}
