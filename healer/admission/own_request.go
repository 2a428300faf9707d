package admission

import (
	"context"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// ownRequestDenial judges a request the manager itself creates. The manager
// may not delete pods; it recreates containers on behalf of a
// RecreatePolicy, whose creator had to be allowed to delete the pods of its
// namespace (the policy-authorization ValidatingAdmissionPolicy). Its
// requests pass the request-authorization policy by its identity, which no
// role can grant, and are judged here: accepted when the policy that
// controls the request exists, is the same object (UID), and selects the
// pod. It returns the refusal, nil when accepted.
func ownRequestDenial(ctx context.Context, c client.Reader, crr *v1beta1.ContainerRecreateRequest, namespace string, pod *corev1.Pod) *admission.Response {
	owner := v1alpha1.ControllingPolicy(crr)
	if owner == nil {
		return forbidden("the manager creates ContainerRecreateRequests only for a RecreatePolicy that controls them; %s has no such owner", displayName(crr))
	}
	policy := &v1alpha1.RecreatePolicy{}
	err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: owner.Name}, policy)
	switch {
	case apierrors.IsNotFound(err):
		return forbidden("RecreatePolicy %s/%s, which owns %s, does not exist", namespace, owner.Name, displayName(crr))
	case err != nil:
		resp := admission.Errored(http.StatusInternalServerError, fmt.Errorf("read RecreatePolicy %s/%s for ContainerRecreateRequest %s: %w", namespace, owner.Name, displayName(crr), err))
		return &resp
	case policy.UID != owner.UID:
		return forbidden("RecreatePolicy %s/%s is not the one (UID %s) that owns %s", namespace, owner.Name, owner.UID, displayName(crr))
	case pod == nil:
		// The pod's absence is reported by the validation.
		return nil
	}
	selector, err := metav1.LabelSelectorAsSelector(&policy.Spec.Selector)
	if err != nil || !selector.Matches(labels.Set(pod.Labels)) {
		return forbidden("RecreatePolicy %s/%s does not select pod %s, so the manager may not recreate its containers", namespace, policy.Name, pod.Name)
	}
	return nil
}

func forbidden(format string, args ...any) *admission.Response {
	resp := admission.Denied(fmt.Sprintf(format, args...))
	resp.Result.Code = http.StatusForbidden
	resp.Result.Reason = metav1.StatusReasonForbidden
	return &resp
}
