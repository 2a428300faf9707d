package admission

import (
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	rejuvv1alpha1 "github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

var (
	crrKind    = v1beta1.GroupVersion.WithKind("ContainerRecreateRequest").GroupKind()
	policyKind = rejuvv1alpha1.GroupVersion.WithKind("RecreatePolicy").GroupKind()
)

// invalid denies a request for a ContainerRecreateRequest with the field
// errors as an Invalid status, so that kubectl prints each field and
// clients get them as causes.
func invalid(name string, errs field.ErrorList) admission.Response {
	return invalidObject(crrKind, name, errs)
}

func invalidObject(kind schema.GroupKind, name string, errs field.ErrorList) admission.Response {
	status := apierrors.NewInvalid(kind, name, errs).ErrStatus
	resp := admission.Denied(status.Message)
	resp.Result = &status
	resp.Result.Code = http.StatusUnprocessableEntity
	return resp
}
