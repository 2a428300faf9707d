package admission

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DisruptionAuthorizer decides whether a user may recreate a pod's
// containers: creating a ContainerRecreateRequest disrupts the pod as much as
// deleting it, so it asks the API server (SubjectAccessReview) whether the
// user may delete that pod. The manager's own requests are judged by the
// policy they are made for instead (see ownRequestDenial).
type DisruptionAuthorizer struct {
	Client client.Client
	// Self is the manager's own user name.
	Self string
}

// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// Allowed reports whether user may delete the pod, and the authorizer's reason.
func (a *DisruptionAuthorizer) Allowed(ctx context.Context, user authenticationv1.UserInfo, namespace, pod string) (bool, string, error) {
	extra := make(map[string]authorizationv1.ExtraValue, len(user.Extra))
	for k, v := range user.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user.Username, UID: user.UID, Groups: user.Groups, Extra: extra,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: namespace, Verb: "delete", Resource: "pods", Name: pod,
		},
	}}
	if err := a.Client.Create(ctx, sar); err != nil {
		return false, "", fmt.Errorf("ask whether %s may delete pod %s/%s: %w", user.Username, namespace, pod, err)
	}
	return sar.Status.Allowed, sar.Status.Reason, nil
}

// isSelf says whether the requester is the manager itself.
func (a *DisruptionAuthorizer) isSelf(user authenticationv1.UserInfo) bool {
	return a != nil && a.Self != "" && user.Username == a.Self
}
