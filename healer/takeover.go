package healer

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// leaderWatches are the kinds the leader's controllers watch: the
// policies, the pods they select, the requests they make (of the version
// requests) and the PodDisruptionBudgets they respect; with requests
// executed here, nodes too (the request controller's requests are the
// policies', v1beta1 then). The emergency stop's ConfigMap every replica
// watches already.
func leaderWatches(requests client.Object, executes bool) []client.Object {
	kinds := []client.Object{&v1alpha1.RecreatePolicy{}, &corev1.Pod{}, requests, &policyv1.PodDisruptionBudget{}}
	if executes {
		kinds = append(kinds, &corev1.Node{})
	}
	return kinds
}

// watchForTakeover starts, in every replica and not only in the leader,
// the informers of what the leader's controllers watch: a controller
// waits for its informers to have listed everything before it starts, so
// a standby that took over would otherwise list the cluster's policies,
// budgets and nodes (and, beside OpenKruise, its pods) first, while no
// replica leads.
func watchForTakeover(ctx context.Context, c cache.Cache, kinds []client.Object) error {
	for _, kind := range kinds {
		if _, err := c.GetInformer(ctx, kind, cache.BlockUntilSynced(false)); err != nil {
			return fmt.Errorf("watch %T for a takeover: %w", kind, err)
		}
	}
	return nil
}
