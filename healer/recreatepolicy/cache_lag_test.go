package recreatepolicy

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	apipods "github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// cacheShowsUnready checks the premise of a lagging cache: it shows
// unready the pods named, and Ready the others.
func cacheShowsUnready(t *testing.T, c *testReconciler, ns string, unready ...*corev1.Pod) {
	t.Helper()
	cached := &corev1.PodList{}
	if err := c.Client.List(context.Background(), cached, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, pod := range cached.Items {
		ready := true
		for _, u := range unready {
			ready = ready && u.Name != pod.Name
		}
		if apipods.Ready(&pod) != ready {
			t.Fatalf("premise: the cache shows pod %s Ready %v, want %v", pod.Name, apipods.Ready(&pod), ready)
		}
	}
}

// oneUnavailable is four pods, Ready for an hour, and a policy's spec
// whose rule asks for the pods annotated, under rollout.maxUnavailable 1
// and no blast-radius halt.
func oneUnavailable(t *testing.T, c *testReconciler, ns string) ([]*corev1.Pod, v1alpha1.RecreatePolicySpec) {
	t.Helper()
	pods := createPods(t, ns, "web", 4, c.clock.Now().Add(-time.Hour))
	spec := rulePolicy("web", annotated)
	spec.Limits.MaxMatchingPercent = new(int32(100))
	spec.Rollout.MaxUnavailable = new(intstr.FromInt32(1))
	return pods, spec
}

// heldAsReadyAgain says whether the policy's decisions hold pod back as
// Ready again, though the cache showed it unready.
func heldAsReadyAgain(t *testing.T, p *v1alpha1.RecreatePolicy, pod *corev1.Pod) bool {
	t.Helper()
	for _, d := range getPolicy(t, p).Status.RecentDecisions {
		if d.Pod == pod.Name && d.Outcome == v1alpha1.OutcomeUnavailable && strings.Contains(d.Message, "cache showed it unready") {
			return true
		}
	}
	return false
}

// TestAPodTheCacheShowsUnreadyWaitsUnderItsBudget: a cache that lags
// shows a pod unready that is Ready again, while another pod's readiness
// lost since has left the budget no disruption. A pod unready may go
// uncharged while the budget is met, but this one is Ready: the pass must
// read it as it is and hold it back. Seen in the soak (seed 5): after the
// API server restarted, the new leader's pod watch backed off for about
// 20 s, and a run recreated a Ready pod uncharged while its budget allowed
// no disruption (2 healthy of 3 desired).
func TestAPodTheCacheShowsUnreadyWaitsUnderItsBudget(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	freeze := cacheBeforeEviction(t, c, ns)
	pods, pdb, spec := budgetOfOne(t, c, ns, 3)
	started := c.clock.Now().Add(-time.Hour)
	p := createPolicy(t, ns, "p", spec)
	annotate(t, pods[0])
	setPodStatus(t, pods[0], false, "containerd://"+pods[0].Name+"-1", 0, started)
	setPDBStatus(t, pdb, 2, 2, 3)
	freeze()

	setPodStatus(t, pods[0], true, "containerd://"+pods[0].Name+"-1", 0, started)
	setPodStatus(t, pods[1], false, "containerd://"+pods[1].Name+"-1", 0, started)
	cacheShowsUnready(t, c, ns, pods[0])

	c.reconcile(t, p)
	if crrs := requestsOf(t, p); len(crrs) != 0 {
		t.Errorf("%d requests (for pod %s) while the budget allows no disruption and the pod is Ready", len(crrs), crrs[0].Spec.PodName)
	}
	if !heldAsReadyAgain(t, p, pods[0]) {
		t.Errorf("pod %s not held back as Ready again: %+v", pods[0].Name, getPolicy(t, p).Status.RecentDecisions)
	}
}

// TestAPodTheCacheShowsUnreadyWaitsUnderMaxUnavailable: the same lag
// with no PodDisruptionBudget. Two pods the cache still shows unready
// are Ready again; the gates let an unready pod go without a unit of
// rollout.maxUnavailable (1 here), so both would go at once, two Ready
// pods taken under a budget of one. Seen in the soak (seed 9): a restart
// run took 3 of 4 pods under maxUnavailable 1, two of them in one pass
// about 25 s after the API server restarted. Both must wait for a pass
// that counts them.
func TestAPodTheCacheShowsUnreadyWaitsUnderMaxUnavailable(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	freeze := cacheBeforeEviction(t, c, ns)
	pods, spec := oneUnavailable(t, c, ns)
	started := c.clock.Now().Add(-time.Hour)
	for _, pod := range pods[:2] {
		annotate(t, pod)
		setPodStatus(t, pod, false, "containerd://"+pod.Name+"-1", 0, started)
	}
	p := createPolicy(t, ns, "p", spec)
	freeze()

	for _, pod := range pods[:2] {
		setPodStatus(t, pod, true, "containerd://"+pod.Name+"-1", 0, started)
	}
	cacheShowsUnready(t, c, ns, pods[:2]...)

	c.reconcile(t, p)
	if crrs := requestsOf(t, p); len(crrs) != 0 {
		t.Errorf("%d requests for pods Ready under rollout.maxUnavailable 1, taken as unready; want none in this pass", len(crrs))
	}
	for _, pod := range pods[:2] {
		if !heldAsReadyAgain(t, p, pod) {
			t.Errorf("pod %s not held back as Ready again: %+v", pod.Name, getPolicy(t, p).Status.RecentDecisions)
		}
	}
}

// TestARecreationTheCacheHasNotSeenCountsAsInFlight: a request completed
// (its container recreated, which the daemon reports only once the pod's
// status shows the new instance) while the cache still shows the pod
// with the instance the request stopped, Ready as it was before the stop:
// the pod watch lags the requests'. Trusting the cache, the pass would
// count no pod unavailable and take another under maxUnavailable 1 while
// the first is still restarting. Seen in the end-to-end suite under load:
// two pods unready or being recreated at once under a budget of one. The
// pod counts as being recreated until the cache shows the new instance.
func TestARecreationTheCacheHasNotSeenCountsAsInFlight(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	freeze := cacheBeforeEviction(t, c, ns)
	pods, spec := oneUnavailable(t, c, ns)
	p := createPolicy(t, ns, "p", spec)
	annotate(t, pods[1])
	// A request made by hand for web-0, as the webhook records it.
	crr := &appsv1beta1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "by-hand", Labels: map[string]string{appsv1beta1.PodUIDLabel: string(pods[0].UID)}},
		Spec: appsv1beta1.ContainerRecreateRequestSpec{PodName: pods[0].Name, Containers: []appsv1beta1.ContainerRecreateRequestContainer{{
			Name: "app", StatusContext: &appsv1beta1.ContainerRecreateRequestContainerContext{ContainerID: "containerd://" + pods[0].Name + "-1"}}}},
	}
	if err := admin.Create(context.Background(), crr); err != nil {
		t.Fatal(err)
	}
	freeze()

	complete(t, c, crr, false)
	cacheShowsUnready(t, c, ns)
	c.reconcile(t, p)
	if crrs := requestsOf(t, p); len(crrs) != 0 {
		t.Errorf("%d requests while web-0, recreated, restarts (the cache shows it as before its stop) under rollout.maxUnavailable 1", len(crrs))
	}
	if !decided(t, p, v1alpha1.OutcomeUnavailable) {
		t.Errorf("no Unavailable decision: %+v", getPolicy(t, p).Status.RecentDecisions)
	}
}
