package admission

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// answer is a handler that gives one response.
type answer admission.Response

func (a answer) Handle(context.Context, admission.Request) admission.Response {
	return admission.Response(a)
}

func TestRefusalsAreCountedByWebhookAndReason(t *testing.T) {
	cases := []struct {
		name   string
		resp   admission.Response
		reason string
	}{
		{"field errors", invalid("r", field.ErrorList{field.Required(field.NewPath("spec", "podName"), "")}), "Invalid"},
		{"forbidden", admission.Errored(http.StatusForbidden, errors.New("not yours")), "Forbidden"},
		{"bad request", admission.Errored(http.StatusBadRequest, errors.New("no object")), "BadRequest"},
		{"internal error", admission.Errored(http.StatusInternalServerError, errors.New("cache down")), "InternalError"},
		{"a denial, which is Forbidden as the API server says it", admission.Denied("no"), "Forbidden"},
		{"another code", admission.Errored(http.StatusConflict, errors.New("taken")), "Denied"},
	}
	const path = "/test-refusals"
	for _, tc := range cases {
		before := testutil.ToFloat64(refused.WithLabelValues(path, tc.reason))
		counted{path: path, Handler: answer(tc.resp)}.Handle(context.Background(), admission.Request{})
		if got := testutil.ToFloat64(refused.WithLabelValues(path, tc.reason)) - before; got != 1 {
			t.Errorf("%s: refusals{reason=%q} grew by %v, want 1", tc.name, tc.reason, got)
		}
	}
	total := testutil.CollectAndCount(refused)
	counted{path: path, Handler: answer(admission.Allowed(""))}.Handle(context.Background(), admission.Request{})
	if n := testutil.CollectAndCount(refused); n != total {
		t.Errorf("an allowed request added series: %d, had %d", n, total)
	}
	for reason, want := range map[string]float64{"Invalid": 1, "Forbidden": 2, "BadRequest": 1, "InternalError": 1, "Denied": 1} {
		if got := testutil.ToFloat64(refused.WithLabelValues(path, reason)); got != want {
			t.Errorf("after an allowed request, refusals{reason=%q} is %v, want %v", reason, got, want)
		}
	}
}
