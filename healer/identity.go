package healer

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// whoAmI asks the API server which user the manager's credentials are
// (SelfSubjectReview, which every authenticated user may ask): the webhook
// judges the requests that user creates by their policy.
func whoAmI(ctx context.Context, c client.Client) (string, error) {
	review := &authenticationv1.SelfSubjectReview{}
	if err := c.Create(ctx, review); err != nil {
		return "", fmt.Errorf("ask the API server who the manager is (SelfSubjectReview): %w", err)
	}
	if review.Status.UserInfo.Username == "" {
		return "", fmt.Errorf("ask the API server who the manager is: the SelfSubjectReview names no user")
	}
	return review.Status.UserInfo.Username, nil
}
