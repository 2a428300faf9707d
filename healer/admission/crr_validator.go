package admission

import (
	"context"
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// CRRValidator rejects ContainerRecreateRequests that cannot be carried out
// (each rejection names the field), keeps their spec and routing labels
// immutable, and, unless Authorizer is nil, lets only users who may delete
// the pod create one.
type CRRValidator struct {
	// Reader reads pods, from the API server rather than a cache.
	Reader     client.Reader
	Authorizer *DisruptionAuthorizer
	Decoder    admission.Decoder
}

// Handle implements admission.Handler.
func (v *CRRValidator) Handle(ctx context.Context, req admission.Request) admission.Response {
	switch req.Operation {
	case admissionv1.Create:
		return v.create(ctx, req)
	case admissionv1.Update:
		return v.update(req)
	default:
		return admission.Allowed("")
	}
}

func (v *CRRValidator) create(ctx context.Context, req admission.Request) admission.Response {
	crr := &v1beta1.ContainerRecreateRequest{}
	if err := v.Decoder.Decode(req, crr); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode ContainerRecreateRequest: %w", err))
	}
	errs := validateSpec(&crr.Spec)
	// Whether the user may disrupt the pod does not depend on what the pod
	// holds: ask while the pod is read, as the request waits for both.
	authz := v.authorize(ctx, req, crr.Spec.PodName)
	if crr.Spec.PodName != "" {
		pod := &corev1.Pod{}
		err := v.Reader.Get(ctx, types.NamespacedName{Namespace: req.Namespace, Name: crr.Spec.PodName}, pod)
		switch {
		case apierrors.IsNotFound(err):
			pod = nil
		case err != nil:
			return admission.Errored(http.StatusInternalServerError, fmt.Errorf("read pod %s/%s for ContainerRecreateRequest %s: %w", req.Namespace, crr.Spec.PodName, displayName(crr), err))
		}
		errs = append(errs, validateAgainstPod(crr, req.Namespace, pod)...)
	}
	if len(errs) > 0 {
		return invalid(displayName(crr), errs)
	}
	a := <-authz
	if a.err != nil {
		return admission.Errored(http.StatusInternalServerError, a.err)
	}
	if !a.allowed {
		msg := fmt.Sprintf("user %q may not delete pod %s/%s, so it may not recreate its containers", req.UserInfo.Username, req.Namespace, crr.Spec.PodName)
		if a.reason != "" {
			msg += ": " + a.reason
		}
		resp := admission.Denied(msg)
		resp.Result.Code = http.StatusForbidden
		resp.Result.Reason = metav1.StatusReasonForbidden
		return resp
	}
	return admission.Allowed("")
}

// authorization is the Authorizer's answer.
type authorization struct {
	allowed bool
	reason  string
	err     error
}

// authorize asks the Authorizer, if any, in the background; the channel
// delivers its answer (allowed, without an Authorizer). It is buffered, so
// an answer nobody reads does not keep the goroutine.
func (v *CRRValidator) authorize(ctx context.Context, req admission.Request, pod string) <-chan authorization {
	out := make(chan authorization, 1)
	if v.Authorizer == nil || pod == "" {
		out <- authorization{allowed: true}
		return out
	}
	go func() {
		var a authorization
		a.allowed, a.reason, a.err = v.Authorizer.Allowed(ctx, req.UserInfo, req.Namespace, pod)
		out <- a
	}()
	return out
}

func (v *CRRValidator) update(req admission.Request) admission.Response {
	updated, old := &v1beta1.ContainerRecreateRequest{}, &v1beta1.ContainerRecreateRequest{}
	if err := v.Decoder.Decode(req, updated); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode ContainerRecreateRequest: %w", err))
	}
	if err := v.Decoder.DecodeRaw(req.OldObject, old); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode old ContainerRecreateRequest: %w", err))
	}
	if errs := validateUpdate(old, updated); len(errs) > 0 {
		return invalid(updated.Name, errs)
	}
	return admission.Allowed("")
}
