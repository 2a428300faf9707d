package admission

import (
	"encoding/json"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/rejuv-dev/rejuv/api/apps/v1alpha1"
	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// The mutating webhook is called in the version the client wrote
// (OpenKruise's clients write v1alpha1): it reads and answers in that
// version, converting in process, which spares a v1alpha1 create the API
// server's two calls of the conversion webhook around it.

// decodeRequest reads the request of an admission review as the hub
// version, whichever version the client wrote.
func decodeRequest(d admission.Decoder, req admission.Request) (*v1beta1.ContainerRecreateRequest, error) {
	if req.Kind.Version != v1alpha1.GroupVersion.Version {
		crr := &v1beta1.ContainerRecreateRequest{}
		if err := d.Decode(req, crr); err != nil {
			return nil, fmt.Errorf("decode ContainerRecreateRequest: %w", err)
		}
		return crr, nil
	}
	alpha := &v1alpha1.ContainerRecreateRequest{}
	if err := d.Decode(req, alpha); err != nil {
		return nil, fmt.Errorf("decode ContainerRecreateRequest (v1alpha1): %w", err)
	}
	crr := &v1beta1.ContainerRecreateRequest{}
	if err := alpha.ConvertTo(crr); err != nil {
		return nil, err
	}
	return crr, nil
}

// encodeRequest writes crr in the version of the admission review, for the
// patch against what the client sent.
func encodeRequest(req admission.Request, crr *v1beta1.ContainerRecreateRequest) ([]byte, error) {
	if req.Kind.Version != v1alpha1.GroupVersion.Version {
		return json.Marshal(crr)
	}
	alpha := &v1alpha1.ContainerRecreateRequest{}
	if err := alpha.ConvertFrom(crr); err != nil {
		return nil, err
	}
	alpha.APIVersion, alpha.Kind = v1alpha1.GroupVersion.String(), "ContainerRecreateRequest"
	return json.Marshal(alpha)
}
