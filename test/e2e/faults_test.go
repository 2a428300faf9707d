package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/test/cluster/harness"
	"github.com/rejuv-dev/rejuv/test/deploy"
)

// Faults on the real cluster. Each test asserts what an operator would
// check afterwards: no container recreated twice, no budget exceeded, no
// pod left NotReady or unrecreated.

// rollingPolicy is an every-minute rolling restart of app, one pod at a
// time, each new container running 3 s before the next pod goes.
func rollingPolicy(ns, name, app string) *v1alpha1.RecreatePolicy {
	return &v1alpha1.RecreatePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.RecreatePolicySpec{
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
			Schedule: &v1alpha1.Schedule{Cron: "* * * * *"},
			Rollout:  v1alpha1.Rollout{MaxUnavailable: new(intstr.FromInt32(1))},
			Recreate: v1alpha1.RecreateTemplate{Strategy: &v1beta1.ContainerRecreateRequestStrategy{MinStartedSeconds: 3}},
		},
	}
}

// waitRunInFlight waits until the policy's run has recreated some pods
// and has a request in flight.
func waitRunInFlight(t *testing.T, c client.Client, ns, policy string, recreated int32) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		run := readPolicy(t, c, ns, policy).Status.Run
		if run != nil && run.Recreated >= recreated {
			for _, crr := range policyRequests(t, c, ns, policy) {
				if crr.Status.Phase != v1beta1.PhaseCompleted {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run of %s/%s has no request in flight after %d pods: %+v", ns, policy, recreated, run)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// recreatedOncePerPod checks that the run recreated every pod of before
// exactly once, in place.
func recreatedOncePerPod(t *testing.T, c client.Client, ns, policy, selector string, before map[string]*corev1.Pod, run *v1alpha1.Run) {
	t.Helper()
	perPod := requestsPerPod(t, c, ns, policy, run)
	after := waitPods(t, c, ns, selector, len(before))
	for _, b := range before {
		a := after[b.Name]
		if a == nil || a.UID != b.UID {
			t.Errorf("pod %s was replaced", b.Name)
			continue
		}
		if perPod[b.Name] != 1 || containerStatus(a, "app").RestartCount != containerStatus(b, "app").RestartCount+1 {
			t.Errorf("pod %s: %d requests, restartCount %d -> %d; want exactly one recreation", b.Name, perPod[b.Name],
				containerStatus(b, "app").RestartCount, containerStatus(a, "app").RestartCount)
		}
	}
}

// TestNodeLostDuringARequest stops the second node's kubelet and
// containerd for real while its daemon stops a container, as a node that
// is lost would: the node goes NotReady and the manager ends the request
// Failed once the node has been NotReady for --node-lost-grace (20 s
// here), not before. When the node comes back, nothing stops the
// container again: it was stopped at most once. Not parallel: the other
// tests' pods on that node would be lost too.
func TestNodeLostDuringARequest(t *testing.T) {
	disturbs(t)
	c := rejuvStack(t).Client
	ctx := context.Background()
	second := secondNode(t)
	crr, pod, before, _ := stubbornRequest(t, "node-lost", second.Name, 4)
	// The premise: the node is Ready until it is lost.
	node, err := kube.CoreV1().Nodes().Get(ctx, second.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady && cond.Status != corev1.ConditionTrue {
			t.Fatalf("node %s is %s (%s) before it is lost", node.Name, cond.Status, cond.Reason)
		}
	}
	components := []string{second.Component(harness.ComponentKubelet), second.Component(harness.ComponentContainerd)}
	for _, component := range components {
		if err := cluster.Stop(component); err != nil {
			t.Fatal(err)
		}
	}
	stopped := time.Now()
	restarted := false
	restart := func() {
		if !restarted {
			restarted = true
			for _, component := range slices.Backward(components) {
				if err := cluster.Start(ctx, component); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	defer restart()
	got, _ := waitCompleted(t, c, crr, 3*time.Minute)
	ended := time.Since(stopped)
	if got.Status.Result != v1beta1.ResultFailed || !strings.Contains(got.Status.Message, "is NotReady") || !strings.Contains(got.Status.Message, "no daemon can finish the request") {
		t.Errorf("result %q, message %q; want Failed for the lost node", got.Status.Result, got.Status.Message)
	}
	if ended < 20*time.Second {
		t.Errorf("the request ended %s after the node was lost, before the node could be NotReady for the grace", ended)
	}
	restart()
	waitPod(t, pod.Namespace, pod.Name, "Ready again", podReady(true))
	// Give a stray second stop the time it would take.
	time.Sleep(5 * time.Second)
	after := waitPod(t, pod.Namespace, pod.Name, "Ready", podReady(true))
	if n := containerStatus(after, "app").RestartCount - before.RestartCount; n > 1 {
		t.Errorf("%d restarts once the node returned, want at most 1: the container was stopped again", n)
	}
	t.Logf("the request ended %s after the node was lost: %s; the container restarted %d times", ended.Round(time.Second), got.Status.Message,
		containerStatus(after, "app").RestartCount-before.RestartCount)
}

// TestManagerDownWhileRequestsAreCreated scales the manager to zero while
// a request is in flight: a new request is refused with an error that
// names Rejuv's webhook, the request in flight is finished by the daemon,
// and once the manager is back requests are admitted again. Not parallel:
// every test needs the manager.
func TestManagerDownWhileRequestsAreCreated(t *testing.T) {
	disturbs(t)
	s := rejuvStack(t)
	c := s.Client
	ctx := context.Background()
	crr, pod, before, _ := stubbornRequest(t, "manager-down", "", 4)
	scale := func(n int) {
		t.Helper()
		if out, err := s.Kubectl(ctx, "--namespace", deploy.Namespace, "scale", "deployment/"+deploy.HealerDeployment, fmt.Sprintf("--replicas=%d", n)); err != nil {
			t.Fatalf("scale the manager to %d: %v\n%s", n, err, out)
		}
	}
	scale(0)
	scaledUp := false
	defer func() {
		if !scaledUp {
			scale(2)
		}
	}()
	// Gone, not only terminating: a terminating manager still serves its
	// webhooks until it has shut down.
	waitFor(t, "the manager's pods gone", func() bool {
		pods, err := s.Kube.CoreV1().Pods(deploy.Namespace).List(ctx, metav1.ListOptions{LabelSelector: deploy.HealerSelector})
		return err == nil && len(pods.Items) == 0
	})
	second := newRequest(pod.Namespace, "refused", pod.Name, "app")
	err := c.Create(ctx, second)
	if err == nil || !strings.Contains(err.Error(), "mcrr.rejuv.dev") {
		t.Errorf("create while the manager is down: %v; want a refusal naming the webhook mcrr.rejuv.dev", err)
	}
	got, _ := waitCompleted(t, c, crr, time.Minute)
	if got.Status.Result != v1beta1.ResultSucceeded {
		t.Errorf("the request in flight ended %q: %+v", got.Status.Result, got.Status.ContainerRecreateStates)
	}
	scale(2)
	scaledUp = true
	if err := s.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	third := newRequest(pod.Namespace, "after", pod.Name, "app")
	third.Spec.Strategy = &v1beta1.ContainerRecreateRequestStrategy{TerminationGracePeriodSeconds: new(int64(1))}
	if err := c.Create(ctx, third); err != nil {
		t.Fatalf("create once the manager is back: %v", err)
	}
	if done, _ := waitCompleted(t, c, third, time.Minute); done.Status.Result != v1beta1.ResultSucceeded {
		t.Errorf("the request after the manager came back ended %q", done.Status.Result)
	}
	after := waitPod(t, pod.Namespace, pod.Name, "Ready", podReady(true))
	if n := containerStatus(after, "app").RestartCount - before.RestartCount; n != 2 {
		t.Errorf("%d restarts for two requests, want 2", n)
	}
}

// gatedNamespace creates a namespace whose pods get the readiness gate.
func gatedNamespace(t *testing.T, c client.Client) string {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-gate-", Labels: map[string]string{"rejuv.dev/readiness-gate": "enabled"}}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), ns) })
	waitFor(t, "the namespace's default ServiceAccount", func() bool {
		_, err := kube.CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil
	})
	return ns.Name
}

// TestRequestDeletedMidFlight deletes a request while it holds its pod
// NotReady for the unready grace: the pod is Ready again at once, and the
// container is never stopped.
func TestRequestDeletedMidFlight(t *testing.T) {
	t.Parallel()
	c := rejuvStack(t).Client
	ctx := context.Background()
	ns := gatedNamespace(t, c)
	before := createPod(t, ns, testappPod("held"))
	crr := newRequest(ns, "deleted", before.Name, "app")
	crr.Spec.Strategy = &v1beta1.ContainerRecreateRequestStrategy{UnreadyGracePeriodSeconds: ptr.To[int64](30)}
	if err := c.Create(ctx, crr); err != nil {
		t.Fatal(err)
	}
	waitPod(t, ns, before.Name, "NotReady for the grace", podReady(false))
	if err := c.Delete(ctx, crr); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	waitPod(t, ns, before.Name, "Ready again", podReady(true))
	if took := time.Since(deleted); took > 10*time.Second {
		t.Errorf("the pod was Ready again %s after its request was deleted", took)
	}
	waitFor(t, "the request gone", func() bool {
		return apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(crr), &v1beta1.ContainerRecreateRequest{}))
	})
	time.Sleep(3 * time.Second)
	after := waitPod(t, ns, before.Name, "Ready", podReady(true))
	if s := containerStatus(after, "app"); s.ContainerID != containerStatus(before, "app").ContainerID || s.RestartCount != containerStatus(before, "app").RestartCount {
		t.Errorf("the container was stopped although its request was deleted before the grace ended")
	}
}

// TestRequestDeletedAfterItsStop deletes a request after its container
// was stopped, while it waits minStartedSeconds for the new container and
// holds the pod's readiness gate: the pod is Ready again once the new
// container is, and the container was stopped once, not again.
func TestRequestDeletedAfterItsStop(t *testing.T) {
	t.Parallel()
	c := rejuvStack(t).Client
	ctx := context.Background()
	ns := gatedNamespace(t, c)
	before := createPod(t, ns, testappPod("stopped"))
	crr := newRequest(ns, "deleted-late", before.Name, "app")
	crr.Spec.Strategy = &v1beta1.ContainerRecreateRequestStrategy{UnreadyGracePeriodSeconds: ptr.To[int64](1), MinStartedSeconds: 20}
	if err := c.Create(ctx, crr); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the request's stop recorded", func() bool {
		got := &v1beta1.ContainerRecreateRequest{}
		if c.Get(ctx, client.ObjectKeyFromObject(crr), got) != nil {
			return false
		}
		states := got.Status.ContainerRecreateStates
		return len(states) == 1 && states[0].IsKilled && got.Status.Phase != v1beta1.PhaseCompleted
	})
	// The premise: the request holds the pod out of service.
	held := waitPod(t, ns, before.Name, "any state", func(*corev1.Pod) bool { return true })
	if gate := pods.Condition(held, v1beta1.PodReadyCondition); gate == nil || gate.Status != corev1.ConditionFalse {
		t.Fatalf("the pod's %s condition is %+v once the stop is recorded; want False, held by the request", v1beta1.PodReadyCondition, gate)
	}
	if err := c.Delete(ctx, crr); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	waitPod(t, ns, before.Name, "Ready with a new container", func(p *corev1.Pod) bool {
		return podReady(true)(p) && containerStatus(p, "app").ContainerID != containerStatus(before, "app").ContainerID
	})
	// The request would have held the pod 20 s after the new container
	// started.
	if took := time.Since(deleted); took > 15*time.Second {
		t.Errorf("the pod was Ready again %s after its request was deleted", took)
	}
	time.Sleep(3 * time.Second)
	after := waitPod(t, ns, before.Name, "Ready", podReady(true))
	if n := containerStatus(after, "app").RestartCount - containerStatus(before, "app").RestartCount; n != 1 {
		t.Errorf("%d restarts after a request deleted after its stop, want 1", n)
	}
}

// TestPolicyDeletedMidRun deletes a policy while its rolling run has a
// request in flight, its pods gated: the garbage collector deletes the
// policy's requests, no pod is left NotReady, none is recreated twice, no
// more than maxUnavailable pods are down at once, and no request is
// created afterwards.
func TestPolicyDeletedMidRun(t *testing.T) {
	t.Parallel()
	c := rejuvStack(t).Client
	ctx := context.Background()
	ns := gatedNamespace(t, c)
	before := testappDeploymentWith(t, c, ns, "web", 3, readinessUnderLoad)
	p := rollingPolicy(ns, "deleted", "web")
	p.Spec.Recreate.Strategy.UnreadyGracePeriodSeconds = ptr.To[int64](2)
	// The run starts 5 s after the policy's creation instead of at the
	// next minute (30 s later on average): the policy is deleted during
	// its first run, so no second run can follow.
	p.Spec.Schedule.Cron = "@every 5s"
	if err := c.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	stopWatch := watchUnavailable(t, c, ns, map[string]string{"app": "web"})
	defer stopWatch()
	waitRunInFlight(t, c, ns, "deleted", 0)
	if err := c.Delete(ctx, p); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the policy's requests deleted", func() bool {
		list := &v1beta1.ContainerRecreateRequestList{}
		return c.List(ctx, list, client.InNamespace(ns)) == nil && len(list.Items) == 0
	})
	time.Sleep(5 * time.Second)
	after := waitPods(t, c, ns, "app=web", 3)
	if out := stopWatch(); out.most > 1 {
		t.Errorf("%d pods unavailable at once, maxUnavailable is 1: %s", out.most, out.worst)
	}
	list := &v1beta1.ContainerRecreateRequestList{}
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil || len(list.Items) != 0 {
		t.Errorf("%d requests after the policy was deleted (%v)", len(list.Items), err)
	}
	for name, b := range before {
		a := after[name]
		if a == nil || a.UID != b.UID {
			t.Errorf("pod %s was replaced", name)
			continue
		}
		if n := containerStatus(a, "app").RestartCount - containerStatus(b, "app").RestartCount; n > 1 {
			t.Errorf("pod %s restarted %d times", name, n)
		}
	}
}

// TestEvictionBySomeoneElseDuringARun evicts a pod through the eviction
// API as a run starts, under a PodDisruptionBudget that allows one
// disruption: between the eviction and the run, never fewer than the
// budget's healthy pods, and the run still recreates every pod once (the
// victim's replacement by its own start). When the run's first request
// wins the race, it was charged to the budget and the eviction is refused.
func TestEvictionBySomeoneElseDuringARun(t *testing.T) {
	t.Parallel()
	c := rejuvStack(t).Client
	ctx := context.Background()
	ns := newNamespace(t)
	testappDeployment(t, c, ns, "evicted", 4)
	budgetOfOne(t, c, ns, "evicted", 4)
	p := rollingPolicy(ns, "rolling", "evicted")
	p.Spec.Rollout.MaxUnavailable = new(intstr.FromString("50%"))
	if err := c.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	var next time.Time
	waitFor(t, "the next run's time", func() bool {
		n := readPolicy(t, c, ns, "rolling").Status.NextScheduleTime
		if n != nil {
			next = n.Time
		}
		return n != nil
	})
	stopWatch := watchHealthy(t, c, ns, map[string]string{"app": "evicted"})
	defer stopWatch()
	time.Sleep(time.Until(next) - 300*time.Millisecond)
	pods := waitPods(t, c, ns, "app=evicted", 4)
	var victim string
	for name := range pods {
		victim = name
		break
	}
	asked := time.Now()
	err := kube.CoreV1().Pods(ns).EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: victim}})
	evicted := time.Now()
	refused := apierrors.IsTooManyRequests(err)
	if err != nil && !refused {
		t.Fatalf("evict %s just before the run: %v", victim, err)
	}
	run := finishRun(t, c, ns, "rolling")
	fewest := stopWatch()
	if run.State != v1alpha1.RunCompleted {
		t.Fatalf("run %+v, want Completed", run)
	}
	var first time.Time
	for _, crr := range policyRequests(t, c, ns, "rolling") {
		at, err := time.Parse(time.RFC3339Nano, crr.Annotations[v1beta1.RequestedAtAnnotation])
		if err == nil && (first.IsZero() || at.Before(first)) {
			first = at
		}
	}
	// The premise: the eviction is asked for as the run fires, so that it
	// races the run's first request. Either may win; a won eviction holds
	// the run back until the budget allows again.
	if d := asked.Sub(next); d > time.Second {
		t.Fatalf("the eviction was asked for %s after the run's time; want it racing the run's start", d)
	}
	if refused {
		// The run's request came first and was charged to the budget as
		// an eviction is, so the budget refused the eviction.
		if !first.Before(evicted) {
			t.Errorf("the eviction was refused, yet the run's first request was admitted %s after it returned", first.Sub(evicted))
		}
		t.Logf("the run's first request came %s before the eviction returned; the budget refused the eviction", evicted.Sub(first))
		victim = ""
	}
	if fewest < 3 {
		// Which came first tells the two races apart: an eviction the
		// policy's pass did not see, or one the budget allowed while it
		// still counted a pod with a request in flight as healthy.
		t.Errorf("%d healthy pods at one moment (Ready, not terminating, no request in flight); the budget keeps 3 of 4 (the run's first request was admitted %s after the eviction returned)",
			fewest, first.Sub(evicted))
	}
	after := waitPods(t, c, ns, "app=evicted", 4)
	perPod := requestsPerPod(t, c, ns, "rolling", run)
	for name, n := range perPod {
		if n > 1 {
			t.Errorf("pod %s: %d requests in the run", name, n)
		}
		if after[name] == nil && name != victim {
			t.Errorf("pod %s of the run is gone", name)
		}
	}
	// Every pod of the run left is recreated, once, by the run's
	// request; the victim's replacement joined after the run began, with
	// containers new to it, and is not part of the run.
	for name, a := range after {
		b := pods[name]
		if b == nil {
			if perPod[name] != 0 {
				t.Errorf("pod %s, the victim's replacement, got %d requests; it started after the run's time", name, perPod[name])
			}
			continue
		}
		if perPod[name] != 1 || containerStatus(a, "app").RestartCount != containerStatus(b, "app").RestartCount+1 {
			t.Errorf("pod %s: %d requests, restartCount %d -> %d; want recreated exactly once", name, perPod[name],
				containerStatus(b, "app").RestartCount, containerStatus(a, "app").RestartCount)
		}
	}
	want := int32(3)
	if refused {
		want = 4
	}
	if run.Recreated != want || run.UpToDate != 0 {
		t.Errorf("run: %d pods recreated, %d up to date; want %d recreated by the run's requests (the pods it began with, less an evicted one), none up to date", run.Recreated, run.UpToDate, want)
	}
}

// watchHealthy samples, every 100 ms until stop is called, how many of the
// pods matching labels are healthy as a PodDisruptionBudget counts them
// (Ready, not terminating) and have no request in flight, and stop returns
// the fewest seen at once.
func watchHealthy(t *testing.T, c client.Client, ns string, labels map[string]string) (stop func() int) {
	fewest := -1
	stopWatch := watchPods(t, c, ns, labels, 100*time.Millisecond, func(pods []corev1.Pod, busy map[string]bool) {
		n := 0
		for i := range pods {
			if p := &pods[i]; p.DeletionTimestamp == nil && podReady(true)(p) && !busy[p.Name] {
				n++
			}
		}
		if fewest < 0 || n < fewest {
			fewest = n
		}
	})
	return func() int {
		stopWatch()
		return fewest
	}
}

// budgetOfOne creates a PodDisruptionBudget allowing one disruption of the
// pods labelled app=app, and waits until its status counts all n healthy.
func budgetOfOne(t *testing.T, c client.Client, ns, app string, n int32) {
	t.Helper()
	ctx := context.Background()
	if err := c.Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: app},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: new(intstr.FromInt32(1)),
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
		},
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the budget's status", func() bool {
		pdb := &policyv1.PodDisruptionBudget{}
		return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: app}, pdb) == nil && pdb.Status.CurrentHealthy == n && pdb.Status.DisruptionsAllowed == 1
	})
}
