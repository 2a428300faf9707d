package recreatepolicy

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/policy"
)

// TestAStartDoesNotMapEveryPod: a controller that starts (a new leader
// taking over) finds every pod cached already; it evaluates its policies
// without mapping each of those pods to the policies of its namespace,
// which at 10,000 pods held the first pass back by seconds. A pod created
// afterwards is still mapped to its policies.
func TestAStartDoesNotMapEveryPod(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	const cached = 30
	createPods(t, ns, "web", cached, time.Now().Add(-time.Hour))
	p := createPolicy(t, ns, "watch", rulePolicy("web", annotated))

	var mapped atomic.Int32 // the namespace's policies listed: only a pod's mapping lists them
	counting := func(c client.Client) client.Client { return &policyLists{Client: c, n: &mapped} }
	startManagerReading(t, &Reconciler{Engine: policy.NewEngine(policy.Options{})}, counting, ns)

	evaluated := func(want int32) func(context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			got := &v1alpha1.RecreatePolicy{}
			if err := admin.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
				return false, err
			}
			return got.Status.ObservedGeneration == got.Generation && got.Status.SelectedPods == want, nil
		}
	}
	if err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 30*time.Second, true, evaluated(cached)); err != nil {
		t.Fatalf("the policy did not report its %d pods selected after the start: %v", cached, err)
	}
	if n := mapped.Load(); n != 0 {
		t.Errorf("at the start the pods were mapped to their policies %d times, want none: the start enqueues every policy", n)
	}

	late := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "late", Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{{Name: "app", Image: "img"}}},
	}
	if err := admin.Create(t.Context(), late); err != nil {
		t.Fatal(err)
	}
	setPodStatus(t, late, true, "containerd://late-1", 0, time.Now())
	if err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return mapped.Load() > 0, nil
	}); err != nil {
		t.Error("a pod created after the start was not mapped to its namespace's policies")
	}
	if err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 30*time.Second, true, evaluated(cached+1)); err != nil {
		t.Errorf("the policy did not report the pod created after the start: %v", err)
	}
}

// policyLists counts the lists of RecreatePolicies read through it.
type policyLists struct {
	client.Client
	n *atomic.Int32
}

func (c *policyLists) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if _, ok := list.(*v1alpha1.RecreatePolicyList); ok {
		c.n.Add(1)
	}
	return c.Client.List(ctx, list, opts...)
}
