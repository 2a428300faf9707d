package recreatepolicy

import (
	"context"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// cacheBeforeEviction gives the controller a client whose lists of pods and
// PodDisruptionBudgets return what they held when the returned function
// is called, as from a cache that has not seen what happened since.
func cacheBeforeEviction(t *testing.T, c *controller, ns string) (freeze func()) {
	t.Helper()
	watching, err := client.NewWithWatch(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	var frozen atomic.Bool
	pods, pdbs := &corev1.PodList{}, &policyv1.PodDisruptionBudgetList{}
	c.Client = interceptor.NewClient(watching, interceptor.Funcs{List: func(ctx context.Context, cl client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
		if frozen.Load() {
			switch l := list.(type) {
			case *corev1.PodList:
				pods.DeepCopyInto(l)
				return nil
			case *policyv1.PodDisruptionBudgetList:
				pdbs.DeepCopyInto(l)
				return nil
			}
		}
		return cl.List(ctx, list, opts...)
	}})
	return func() {
		for _, list := range []client.ObjectList{pods, pdbs} {
			if err := watching.List(context.Background(), list, client.InNamespace(ns)); err != nil {
				t.Fatal(err)
			}
		}
		frozen.Store(true)
	}
}

// TestDisruptionBudgetSeesAnEvictionTheCacheMisses: someone evicts a pod
// through the eviction API, which spends the budget's one disruption in
// its status at once; a pass whose cache shows neither the spent budget
// nor the evicted pod's deletion yet must not recreate another pod.
// Seen on the harness cluster under load: an eviction 300 ms before a
// run's start, then two pods down under a budget of one.
func TestDisruptionBudgetSeesAnEvictionTheCacheMisses(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	freeze := cacheBeforeEviction(t, c, ns)
	pods, pdb, spec := budgetOfOne(t, c, ns, 3)
	p := createPolicy(t, ns, "p", spec)
	annotate(t, pods[0])
	freeze()

	victim := pods[2]
	if err := admin.SubResource("eviction").Create(context.Background(), victim, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: victim.Name}}); err != nil {
		t.Fatalf("evict %s: %v", victim.Name, err)
	}
	live := &policyv1.PodDisruptionBudget{}
	if err := admin.Get(context.Background(), client.ObjectKeyFromObject(pdb), live); err != nil {
		t.Fatal(err)
	}
	if live.Status.DisruptionsAllowed != 0 {
		t.Fatalf("premise: after the eviction the budget allows %d disruptions, want 0", live.Status.DisruptionsAllowed)
	}

	c.reconcile(t, p)
	if n := len(requestsOf(t, p)); n != 0 {
		t.Errorf("%d requests right after someone else's eviction spent the budget's one disruption", n)
	}
	if !decided(t, p, v1alpha1.OutcomeDisruptionBudget) {
		t.Errorf("no DisruptionBudget decision: %+v", getPolicy(t, p).Status.RecentDecisions)
	}
}
