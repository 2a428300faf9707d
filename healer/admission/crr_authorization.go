package admission

import (
	"context"
	"fmt"
	"net/http"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// authorization is the Authorizer's answer.
type authorization struct {
	allowed bool
	reason  string
	err     error
}

// pendingAuthorization delivers the answer of a question asked in the
// background.
type pendingAuthorization <-chan authorization

// authorize asks a, if any, in the background whether the requester may
// disrupt pod (allowed, without an Authorizer). The channel is buffered, so
// an answer nobody reads does not keep the goroutine.
func authorize(ctx context.Context, a *DisruptionAuthorizer, req admission.Request, pod string) pendingAuthorization {
	out := make(chan authorization, 1)
	// The manager's own requests are judged once the pod is read (see
	// ownRequestDenial).
	if a == nil || pod == "" || a.isSelf(req.UserInfo) {
		out <- authorization{allowed: true}
		return out
	}
	go func() {
		var ans authorization
		ans.allowed, ans.reason, ans.err = a.Allowed(ctx, req.UserInfo, req.Namespace, pod)
		out <- ans
	}()
	return out
}

// denial waits for the answer and returns the response that refuses the
// request, nil when it is allowed.
func (p pendingAuthorization) denial(req admission.Request, pod string) *admission.Response {
	a := <-p
	if a.err != nil {
		resp := admission.Errored(http.StatusInternalServerError, a.err)
		return &resp
	}
	if a.allowed {
		return nil
	}
	msg := fmt.Sprintf("user %q may not delete pod %s/%s, so it may not recreate its containers", req.UserInfo.Username, req.Namespace, pod)
	if a.reason != "" {
		msg += ": " + a.reason
	}
	return forbidden("%s", msg)
}
