package recreatepolicy

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// cacheBeforeEviction gives the controller a client whose lists of pods and
// PodDisruptionBudgets return what they held when the returned function
// is called, as from a cache that has not seen what happened since.
func cacheBeforeEviction(t *testing.T, c *testReconciler, ns string) (freeze func()) {
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

// TestARecreationIsChargedToTheBudgetLikeAnEviction: before a policy asks
// for a pod's recreation it spends the budget's disruption in the budget's
// status, as the eviction API does, so that an eviction by someone else
// while the pod is still Ready (its container not yet stopped) is refused
// by the API server: the two cannot both take the budget's one
// disruption. Seen on the harness cluster under load: an eviction admitted
// after a run's request, then two pods down under a budget of one. Once
// the request completes, the policy takes its entry back.
func TestARecreationIsChargedToTheBudgetLikeAnEviction(t *testing.T) {
	needsAPIServer(t)
	ctx := context.Background()
	ns := newNamespace(t)
	c := newController(t, 0)
	pods, pdb, spec := budgetOfOne(t, c, ns, 3)
	p := createPolicy(t, ns, "p", spec)
	annotate(t, pods[0])

	c.reconcile(t, p)
	crrs := requestsOf(t, p)
	if len(crrs) != 1 || crrs[0].Spec.PodName != pods[0].Name {
		t.Fatalf("requests %v, want one for %s", crrs, pods[0].Name)
	}
	live := &policyv1.PodDisruptionBudget{}
	if err := admin.Get(ctx, client.ObjectKeyFromObject(pdb), live); err != nil {
		t.Fatal(err)
	}
	if _, ok := live.Status.DisruptedPods[pods[0].Name]; !ok || live.Status.DisruptionsAllowed != 0 {
		t.Fatalf("budget after the request: %d disruptions allowed, disrupted %v; want 0 and %s charged",
			live.Status.DisruptionsAllowed, live.Status.DisruptedPods, pods[0].Name)
	}

	victim := pods[2]
	err := admin.SubResource("eviction").Create(ctx, victim, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: victim.Name}})
	if !apierrors.IsTooManyRequests(err) {
		t.Fatalf("evict %s while %s's request is in flight and both are Ready: %v; want refused by the budget", victim.Name, pods[0].Name, err)
	}

	complete(t, c, &crrs[0], true)
	c.clock.Step(time.Second)
	c.reconcile(t, p)
	if err := admin.Get(ctx, client.ObjectKeyFromObject(pdb), live); err != nil {
		t.Fatal(err)
	}
	if _, ok := live.Status.DisruptedPods[pods[0].Name]; ok {
		t.Errorf("the budget still counts %s disrupted after its request completed: %v", pods[0].Name, live.Status.DisruptedPods)
	}
}
