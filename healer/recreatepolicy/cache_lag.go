package recreatepolicy

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apipods "github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// confirmUnready reads again, from the API server, the pod of each
// admitted candidate that the manager's cache shows unready. The gates let
// such a pod go without a unit of rollout.maxUnavailable, and its
// PodDisruptionBudgets charge it nothing; but a cache that lags (a watch
// backs off for up to half a minute after the API server restarts) may
// show unready a pod that is Ready again, and taking it would put the
// policy past its budgets. A pod Ready there (the same pod, by UID) is held
// back with Unavailable until a pass that counts it; a pod gone is left to
// its request, which the webhook refuses.
func (r *Reconciler) confirmUnready(ctx context.Context, admitted []*planned) error {
	var reads errgroup.Group
	reads.SetLimit(createWorkers)
	for _, e := range admitted {
		pod := e.c.Pod
		if apipods.Ready(pod) {
			continue
		}
		reads.Go(func() error {
			live := &corev1.Pod{}
			if err := r.Reader.Get(ctx, client.ObjectKeyFromObject(pod), live); err != nil {
				if apierrors.IsNotFound(err) {
					return nil
				}
				return fmt.Errorf("read pod %s/%s, which the cache shows unready, before recreating it: %w", pod.Namespace, pod.Name, err)
			}
			if live.UID == pod.UID && apipods.Ready(live) {
				e.decision.Outcome, e.decision.Message = v1alpha1.OutcomeUnavailable, readyAgainMessage(pod)
			}
			return nil
		})
	}
	return reads.Wait()
}

// readyAgainMessage says why a pod the cache showed unready waits.
func readyAgainMessage(pod *corev1.Pod) string {
	return fmt.Sprintf("pod %s is Ready, though the manager's cache showed it unready: it waits for a pass that counts it against rollout.maxUnavailable and its PodDisruptionBudgets", pod.Name)
}
