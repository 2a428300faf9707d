package healer

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/healer/recreatepolicy"
)

// startedInformers is a cache that records the kinds whose informers were
// asked for, and whether the caller waited for them.
type startedInformers struct {
	cache.Cache
	kinds   []string
	blocked bool
}

func (s *startedInformers) GetInformer(_ context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	s.kinds = append(s.kinds, fmt.Sprintf("%T", obj))
	o := cache.InformerGetOptions{}
	for _, opt := range opts {
		opt(&o)
	}
	if o.BlockUntilSynced == nil || *o.BlockUntilSynced {
		s.blocked = true
	}
	return nil, nil
}

// TestEveryReplicaWatchesWhatTheLeaderWatches: a standby starts the
// informers of every kind the leader's controllers watch, without waiting
// for them, so that a takeover finds them listed: the policies, pods, the
// requests of the version policies make (the request controller's too)
// and budgets, and nodes where the manager executes requests.
func TestEveryReplicaWatchesWhatTheLeaderWatches(t *testing.T) {
	for _, tt := range []struct {
		name     string
		requests recreatepolicy.RequestVersion
		executes bool
		want     []string
	}{
		{"executing requests", recreatepolicy.RequestsV1beta1, true, []string{
			"*v1alpha1.RecreatePolicy", "*v1.Pod", "*v1beta1.ContainerRecreateRequest", "*v1.PodDisruptionBudget", "*v1.Node"}},
		{"beside OpenKruise", recreatepolicy.RequestsV1alpha1, false, []string{
			"*v1alpha1.RecreatePolicy", "*v1.Pod", "*v1alpha1.ContainerRecreateRequest", "*v1.PodDisruptionBudget"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &startedInformers{}
			if err := watchForTakeover(t.Context(), c, leaderWatches(tt.requests.Object(), tt.executes)); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(c.kinds, tt.want) {
				t.Errorf("informers started %v, want %v", c.kinds, tt.want)
			}
			if c.blocked {
				t.Error("waited for an informer to sync: the webhooks would wait for it at the replica's start")
			}
		})
	}
}
