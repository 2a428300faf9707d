package crr

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// end completes a request the daemon cannot finish: every container not yet
// Succeeded or Failed is marked Failed with the reason. The write uses the
// request's resourceVersion, so it loses (and is retried) against a
// concurrent write by the daemon.
func (r *Reconciler) end(ctx context.Context, crr *v1beta1.ContainerRecreateRequest, reason string) error {
	now := metav1.NewTime(r.Clock.Now())
	updated := crr.DeepCopy()
	st := &updated.Status
	st.Phase = v1beta1.PhaseCompleted
	st.CompletionTime = &now
	st.Message = reason
	st.ContainerRecreateStates = finalStates(crr, reason)
	st.Result = v1beta1.ResultOf(st.ContainerRecreateStates)
	if err := r.Client.Status().Update(ctx, updated); err != nil {
		return fmt.Errorf("end ContainerRecreateRequest %s/%s (%s): %w", crr.Namespace, crr.Name, reason, err)
	}
	ctrl.LoggerFrom(ctx).Info("ended ContainerRecreateRequest the daemon could not finish", "reason", reason)
	return nil
}

// finalStates keeps every container's finished state and fails the rest.
func finalStates(crr *v1beta1.ContainerRecreateRequest, reason string) []v1beta1.ContainerRecreateRequestContainerRecreateState {
	out := crr.States()
	for i := range out {
		if s := &out[i]; !s.Finished() {
			s.Phase = v1beta1.PhaseFailed
			backOff, inBackOff := strings.CutPrefix(s.Message, v1beta1.BackOffMessage)
			switch {
			case inBackOff:
				// Slow because of the kubelet, not of Rejuv: say so.
				s.Message = fmt.Sprintf("not recreated: %s while the kubelet held the restart in its crash-loop back-off (%s)", reason, backOff)
			case s.IsKilled:
				// Stopped for this request: the kubelet may yet start it
				// again; "not recreated" would say it was left alone.
				s.Message = fmt.Sprintf("stopped, its new instance not seen: %s", reason)
			default:
				s.Message = fmt.Sprintf("not recreated: %s", reason)
			}
		}
	}
	return out
}

// begun says whether a daemon has begun the request: it records the
// request Recreating before it stops anything (the write, with the
// request's resourceVersion, wins or loses against end's), so a request
// not begun has had nothing stopped.
func begun(crr *v1beta1.ContainerRecreateRequest) bool {
	return crr.Status.Phase == v1beta1.PhaseRecreating
}
