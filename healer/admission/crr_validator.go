package admission

import (
	"context"
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// CRRValidator keeps a ContainerRecreateRequest's spec and routing labels
// as they were created. The checks at creation are the mutating webhook's
// (see CRRMutator): one call of the API server to Rejuv per request.
type CRRValidator struct {
	Decoder admission.Decoder
}

// Handle implements admission.Handler.
func (v *CRRValidator) Handle(_ context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	updated, old := &v1beta1.ContainerRecreateRequest{}, &v1beta1.ContainerRecreateRequest{}
	if err := v.Decoder.Decode(req, updated); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode ContainerRecreateRequest: %w", err))
	}
	if err := v.Decoder.DecodeRaw(req.OldObject, old); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode old ContainerRecreateRequest: %w", err))
	}
	if errs := append(validateUpdate(old, updated), updateSizeErrors(old, updated)...); len(errs) > 0 {
		return invalid(updated.Name, errs)
	}
	return admission.Allowed("")
}
