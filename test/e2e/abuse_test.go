package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/policy/policytest"
	"github.com/rejuv-dev/rejuv/test/deploy"
)

// TestBoundsHoldUnderAbuse: issue 45's findings 1 to 8 at once, at sizes
// this machine allows. One namespace's editor, and the test process as a
// caller with no rights that reaches the manager's port, send oversized
// conversion reviews and forged admission reviews, create fat Pending
// pods, hold four stops of the node's daemon on containers that ignore
// SIGTERM (one of them with 16 requests queued), write rules that run to
// the sandbox's deadline and change them every two seconds, a rule whose
// error cannot fit a status on a policy that restarts its pods, and
// durations, compiled rules and a preStop past their bounds. Meanwhile
// another namespace's gated pods are recreated by a policy and by hand:
// each request starts and completes in its normal time, no pod is held
// out of its Services without one of its requests being executed, and no
// manager or daemon pod restarts. The first tenant's objects are refused,
// or halted, naming the bound; its restarted pods are recreated once.
func TestBoundsHoldUnderAbuse(t *testing.T) {
	s := rejuvStack(t)
	ctx := context.Background()
	components := componentRestarts(t, s)

	// The second tenant's gated pods, older than its policy's maxAge by
	// the time the first tenant has started.
	quiet := gatedNamespace(t, s.Client)
	editIn(t, quiet, "tenant-quiet")
	b := impersonate(t, "tenant-quiet", nil, "")
	aged := testappPod("aged")
	aged.Labels = map[string]string{"app": "aged"}
	aged = createPod(t, quiet, aged)
	byHand := createPod(t, quiet, testappPod("by-hand"))
	for _, p := range []*corev1.Pod{aged, byHand} {
		if pods := p.Spec.ReadinessGates; len(pods) == 0 || pods[0].ConditionType != v1beta1.PodReadyCondition {
			t.Fatalf("premise: pod %s has readiness gates %v, want %s", p.Name, pods, v1beta1.PodReadyCondition)
		}
	}

	abuser := newNamespace(t)
	editIn(t, abuser, "tenant-abuse")
	a := impersonate(t, "tenant-abuse", nil, "")

	// Finding 1: conversion reviews of 15 MiB from a caller with no
	// rights, and forged admission reviews from the tenant's pod.
	replicas, err := s.Pods(ctx, deploy.HealerSelector)
	if err != nil || len(replicas) == 0 {
		t.Fatalf("premise: the manager's replicas: %v (%d)", err, len(replicas))
	}
	var convertURLs []string
	for _, r := range replicas {
		convertURLs = append(convertURLs, fmt.Sprintf("https://%s:9443/convert", r.Status.PodIP))
	}
	stopConversions := floodConversions(forgedConversion(t, abuser, 15<<20), convertURLs, 4)
	service, err := kube.CoreV1().Services(deploy.Namespace).Get(ctx, deploy.WebhookService, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	forged := webhookURLs(service.Spec.ClusterIP + ":443")
	const forgedEach = 100
	startForger(t, a, abuser, forged, forgedCRRReview(t, byHand), forgedEach)

	// Findings 6 and 7: rules that run to the deadline, changed every two
	// seconds so that each generation is evaluated again.
	noisy := labelledPods(t, abuser, "noisy", 2)
	refused := refusePastBounds(t, a, abuser, noisy[0].Name)
	var hostile []string
	for i := range 4 {
		p := builtinPolicy(abuser, fmt.Sprintf("loop-%d", i), "noisy", "max-age", nil)
		p.Spec.Rules = []v1alpha1.Rule{{Name: p.Name, Rego: policytest.Endless}}
		if err := a.Create(ctx, p); err != nil {
			t.Fatalf("the abusing tenant's policy %s: %v", p.Name, err)
		}
		hostile = append(hostile, p.Name)
	}
	stopChurn, generations := churnPolicies(a, abuser, hostile)

	// Finding 4: a restart whose rule's error cannot fit a status, on pods
	// that may be recreated again at once.
	echoes := labelledPods(t, abuser, "echo", 2)
	restart := &v1alpha1.RecreatePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: abuser, Name: "huge"},
		Spec: v1alpha1.RecreatePolicySpec{
			Selector:  metav1.LabelSelector{MatchLabels: map[string]string{"app": "echo"}},
			RestartAt: &metav1.Time{Time: time.Now()},
			Rules:     []v1alpha1.Rule{{Name: "huge", Rego: policytest.HugeValue}},
			Rollout:   v1alpha1.Rollout{MaxUnavailable: new(intstr.FromString("100%"))},
			Limits:    v1alpha1.Limits{Cooldown: &metav1.Duration{}, MaxMatchingPercent: new(int32(100))},
			Recreate:  v1alpha1.RecreateTemplate{TTLSecondsAfterFinished: new(int32(0))},
		},
	}
	if err := a.Create(ctx, restart); err != nil {
		t.Fatalf("the abusing tenant's restart: %v", err)
	}

	// Findings 3 and 8: four stops that wait out a 10-minute grace, and
	// the most requests a pod may have queued behind the first.
	stubborn := holdStops(t, a, abuser, 4)
	refused = append(refused, fillRequestQueue(t, a, abuser, stubborn[0]))

	// Finding 2: fat Pending pods.
	const fat = 60
	createFatPods(t, a, abuser, fat)
	t.Logf("the abusing tenant runs: %d fat pods, 4 held stops with 16 requests on %s, %d policies changed every 2s, a restart with a huge rule, conversion reviews of 15 MiB to %d replicas",
		fat, stubborn[0], len(hostile), len(replicas))

	// The second tenant: its policy's and its own request.
	stopWatching := watchHeldIdle(s.Client, quiet)
	if err := b.Create(ctx, builtinPolicy(quiet, "age", "aged", "max-age", map[string]string{"maxAge": `"20s"`, "jitter": `"1s"`})); err != nil {
		t.Fatalf("the quiet tenant's policy: %v", err)
	}
	asked := time.Now()
	manual := newRequest(quiet, "by-hand", byHand.Name, "app")
	manual.Spec.Strategy = &v1beta1.ContainerRecreateRequestStrategy{UnreadyGracePeriodSeconds: new(int64(3))}
	if err := b.Create(ctx, manual); err != nil {
		t.Fatalf("the quiet tenant's request: %v", err)
	}
	var decided *v1beta1.ContainerRecreateRequest
	waitWithin(t, "the quiet tenant's policy to decide", time.Minute, func() bool {
		if crrs := policyRequests(t, s.Client, quiet, "age"); len(crrs) > 0 {
			decided = &crrs[0]
		}
		return decided != nil
	})
	decidedIn := time.Since(asked)
	completed := map[string]time.Time{}
	for _, crr := range []*v1beta1.ContainerRecreateRequest{manual, decided} {
		got, at := waitCompleted(t, s.Client, crr, 2*time.Minute)
		if got.Status.Result != v1beta1.ResultSucceeded {
			t.Errorf("the quiet tenant's request %s: %s, want Succeeded: %s", crr.Name, got.Status.Result, got.Status.Message)
		}
		completed[crr.Name] = at
	}
	seen := stopWatching()
	for _, p := range []*corev1.Pod{aged, byHand} {
		before := containerStatus(p, "app")
		now := waitPod(t, quiet, p.Name, "running its new container", func(p *corev1.Pod) bool {
			cs := containerStatus(p, "app")
			return cs.ContainerID != before.ContainerID && cs.State.Running != nil
		})
		if n := containerStatus(now, "app").RestartCount; now.UID != p.UID || n != before.RestartCount+1 {
			t.Errorf("the quiet tenant's pod %s: UID %s -> %s, restartCount %d -> %d; want recreated once in place", p.Name, p.UID, now.UID, before.RestartCount, n)
		}
	}
	t.Logf("the quiet tenant's policy decided %s after it was created; %s", decidedIn.Round(100*time.Millisecond), seen)
	if decidedIn > 15*time.Second {
		t.Errorf("the quiet tenant's policy decided %s after it was created (its pod older than maxAge 20s, jitter 1s); want within 15s", decidedIn.Round(time.Second))
	}
	// The request made by hand counts from its create call, the policy's
	// from when the watch first saw it (at most 200 ms after).
	for crr, since := range map[string]time.Time{manual.Name: asked, decided.Name: seen.seen[decided.Name]} {
		started, ok := seen.started[crr]
		t.Logf("the quiet tenant's request %s was executed %s and completed %s after it was made", crr,
			started.Sub(since).Round(100*time.Millisecond), completed[crr].Sub(since).Round(100*time.Millisecond))
		if !ok || started.Sub(since) > 10*time.Second {
			t.Errorf("the quiet tenant's request %s was seen executed (%v) %s after it was made; want within 10s", crr, ok, started.Sub(since).Round(100*time.Millisecond))
		}
		if took := completed[crr].Sub(since); took > 30*time.Second {
			t.Errorf("the quiet tenant's request %s completed %s after it was made; want within 30s", crr, took.Round(time.Second))
		}
	}
	for _, p := range []string{aged.Name, byHand.Name} {
		if seen.held[p] == 0 {
			t.Errorf("premise: the quiet tenant's pod %s was never seen out of service for its request's unready grace", p)
		}
		if idle := seen.idle[p]; idle > 5*time.Second {
			t.Errorf("the quiet tenant's pod %s was held out of its Services for %s with none of its requests being executed; want at most 5s", p, idle)
		}
	}

	// The abusing tenant, now that the other has been served.
	stopChurn()
	answers := stopConversions()
	t.Logf("conversion reviews answered: %v; the abusing tenant changed its policies %d times", answers, generations.Load())
	checkConversionsRefused(t, answers)
	checkForgedRefused(t, forgerAnswers(t, abuser), forged, forgedEach, byHand, containerStatus(byHand, "app").ContainerID)
	checkHaltedBySandbox(t, s.Client, abuser, hostile)
	if n := deferredPasses(leaderMetrics(t), abuser); n == 0 {
		t.Errorf("premise: no pass of the abusing tenant's policies was deferred for its namespace's share of the policy workers")
	} else {
		t.Logf("%v passes of the abusing tenant's policies deferred for its share of the workers", n)
	}
	checkRestartedOnce(t, s.Client, restart, echoes)
	for _, r := range refused {
		t.Log(r)
	}

	if now := componentRestarts(t, s); fmt.Sprint(now) != fmt.Sprint(components) {
		t.Errorf("Rejuv's pods went from %v to %v under the abuse, want the same pods without a restart", components, now)
	}
	t.Logf("Rejuv's pods: %v, unchanged; %s", components, heapLine(leaderMetrics(t)))
}

// checkHaltedBySandbox: each policy of names in ns is halted at its
// current generation, RuleStopped naming its rule (named as the policy).
func checkHaltedBySandbox(t *testing.T, c client.Client, ns string, names []string) {
	t.Helper()
	for _, name := range names {
		var halted *metav1.Condition
		waitWithin(t, "policy "+name+" halted by the sandbox", time.Minute, func() bool {
			got := readPolicy(t, c, ns, name)
			halted = meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionHalted)
			return halted != nil && halted.Status == metav1.ConditionTrue && halted.ObservedGeneration == got.Generation
		})
		if halted.Reason != v1alpha1.ReasonRuleStopped || !strings.Contains(halted.Message, `the sandbox stopped rule "`+name+`"`) {
			t.Errorf("policy %s: Halted %s: %s, want %s naming the rule", name, halted.Reason, halted.Message, v1alpha1.ReasonRuleStopped)
		}
	}
}

// componentRestarts are Rejuv's pods (the manager's and the daemons'), by
// name and UID, with their containers' restart counts.
func componentRestarts(t *testing.T, s *deploy.Stack) map[string]int32 {
	t.Helper()
	out := map[string]int32{}
	for _, selector := range []string{deploy.HealerSelector, deploy.DaemonSelector} {
		list, err := s.Pods(context.Background(), selector)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range list {
			key := p.Name + "/" + string(p.UID)
			out[key] += 0
			for _, cs := range p.Status.ContainerStatuses {
				out[key] += cs.RestartCount
			}
		}
	}
	return out
}

// churnPolicies has c change the evaluation interval of the policies
// names of ns every two seconds until stop is called, and counts the
// changes made.
func churnPolicies(c client.Client, ns string, names []string) (stop func(), changes *atomic.Int64) {
	changes = &atomic.Int64{}
	i := 0
	stop = every(2*time.Second, func() {
		i++
		for _, name := range names {
			err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				p := &v1alpha1.RecreatePolicy{}
				if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
					return err
				}
				p.Spec.EvaluationInterval = &metav1.Duration{Duration: time.Duration(1+i%2) * time.Second}
				return c.Update(context.Background(), p)
			})
			if err == nil {
				changes.Add(1)
			}
		}
	})
	return stop, changes
}

// holdStops has c request the recreation of n containers of ns that
// ignore SIGTERM, with a 10-minute grace and no deadline, and waits until
// the daemon is stopping each (a StoppingContainer event on each pod). It
// returns the pods' names, which are also their requests'. The pods are
// deleted at once at the end of the test: they would otherwise hold the
// namespace for their grace.
func holdStops(t *testing.T, c client.Client, ns string, n int) []string {
	t.Helper()
	var names []string
	for i := range n {
		spec := testappPod(fmt.Sprintf("stubborn-%d", i))
		spec.Spec.TerminationGracePeriodSeconds = new(int64(600))
		spec.Spec.Containers[0].Args = []string{"--ignore-sigterm"}
		pod := createPod(t, ns, spec)
		t.Cleanup(func() {
			_ = kube.CoreV1().Pods(ns).Delete(context.Background(), pod.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))})
		})
		crr := newRequest(ns, pod.Name, pod.Name, "app")
		crr.Spec.ActiveDeadlineSeconds = nil
		if err := c.Create(context.Background(), crr); err != nil {
			t.Fatalf("request the recreation of %s: %v", pod.Name, err)
		}
		names = append(names, pod.Name)
	}
	stopping := map[string]bool{}
	deadline := time.Now().Add(time.Minute)
	for len(stopping) < n {
		if time.Now().After(deadline) {
			t.Fatalf("the daemon is stopping the containers of %v, want all %d stubborn pods", stopping, n)
		}
		time.Sleep(200 * time.Millisecond)
		events, err := kube.EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			continue
		}
		for _, e := range events.Items {
			if e.Regarding.Kind == "Pod" && e.Reason == "StoppingContainer" && strings.HasPrefix(e.Regarding.Name, "stubborn-") {
				stopping[e.Regarding.Name] = true
			}
		}
	}
	return names
}

// fillRequestQueue has c queue requests on pod of ns until it has the
// most active requests a pod may have, then create one more, which must
// be refused naming the bound. It returns the refusal.
func fillRequestQueue(t *testing.T, c client.Client, ns, pod string) string {
	t.Helper()
	ctx := context.Background()
	for i := 1; i < v1beta1.MaxActiveRequestsPerPod; i++ {
		crr := newRequest(ns, fmt.Sprintf("%s-queued-%d", pod, i), pod, "app")
		crr.Spec.ActiveDeadlineSeconds = nil
		if err := c.Create(ctx, crr); err != nil {
			t.Fatalf("queue request %d of %d on pod %s: %v", i+1, v1beta1.MaxActiveRequestsPerPod, pod, err)
		}
	}
	waitWithin(t, fmt.Sprintf("%d requests queued on pod %s", v1beta1.MaxActiveRequestsPerPod, pod), time.Minute, func() bool {
		list := &v1beta1.ContainerRecreateRequestList{}
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return false
		}
		queued := 0
		for _, crr := range list.Items {
			if crr.Spec.PodName == pod && crr.Status.Phase == v1beta1.PhasePending {
				queued++
			}
		}
		return queued == v1beta1.MaxActiveRequestsPerPod-1
	})
	err := c.Create(ctx, newRequest(ns, pod+"-one-too-many", pod, "app"))
	want := fmt.Sprintf("the most a pod may have (%d)", v1beta1.MaxActiveRequestsPerPod)
	if err == nil || !strings.Contains(err.Error(), "spec.podName") || !strings.Contains(err.Error(), want) {
		t.Errorf("request %d on pod %s: %v; want it refused at spec.podName, %q", v1beta1.MaxActiveRequestsPerPod+1, pod, err, want)
		return ""
	}
	return "refused: " + err.Error()
}

// createFatPods has c create n Pending pods of ns, each with a distinct
// 250 KB annotation and a 900 KB preStop command.
func createFatPods(t *testing.T, c client.Client, ns string, n int) {
	t.Helper()
	errs := make(chan error, n)
	var creating sync.WaitGroup
	for w := range 4 {
		creating.Go(func() {
			for i := w; i < n; i += 4 {
				errs <- c.Create(context.Background(), &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("fat-%d", i),
						Annotations: map[string]string{"example.com/blob": fmt.Sprintf("%d-", i) + strings.Repeat("a", 250_000)}},
					Spec: corev1.PodSpec{
						NodeSelector: map[string]string{"rejuv.test/nowhere": "true"},
						Containers: []corev1.Container{{Name: "app", Image: "registry.invalid/none:1",
							Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{
								Command: []string{"sh", "-c", fmt.Sprintf("%d-", i) + strings.Repeat("b", 900_000)}}}}}},
					},
				})
			}
		})
	}
	creating.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("premise: create a fat pod: %v", err)
		}
	}
}

// checkRestartedOnce: the policy's restart completed over both of pods,
// its status was written with the rule's error cut to the bound of a
// condition's message, and each pod was recreated once, though its
// requests are deleted at once and its cooldown is 0.
func checkRestartedOnce(t *testing.T, c client.Client, p *v1alpha1.RecreatePolicy, pods []*corev1.Pod) {
	t.Helper()
	var got *v1alpha1.RecreatePolicy
	waitWithin(t, "the restart of policy "+p.Name+" completed", time.Minute, func() bool {
		got = readPolicy(t, c, p.Namespace, p.Name)
		return got.Status.Run != nil && got.Status.Run.State == v1alpha1.RunCompleted
	})
	ready := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionReady)
	if ready == nil || ready.Reason != v1alpha1.ReasonEvaluationFailed || len(ready.Message) > v1alpha1.MaxMessageLength || !strings.Contains(ready.Message, "truncated") {
		t.Errorf("policy %s: Ready %.300v, want %s within %d bytes saying it was truncated", p.Name, ready, v1alpha1.ReasonEvaluationFailed, v1alpha1.MaxMessageLength)
	} else {
		t.Logf("policy %s: Ready %s, %d bytes: %.100s ... %s", p.Name, ready.Reason, len(ready.Message), ready.Message, ready.Message[len(ready.Message)-40:])
	}
	// Its requests, whose TTL is 0, are kept until the run has counted
	// them.
	if run := got.Status.Run; got.Status.RestartedAt == nil || run.Pods != int32(len(pods)) || run.Recreated != run.Pods {
		t.Errorf("policy %s: restartedAt %v, run %+v; want the restart handled with its %d pods recreated", p.Name, got.Status.RestartedAt, run, len(pods))
	}
	// Its requests go at once: a status that was not written would start
	// the run again within a few passes.
	time.Sleep(20 * time.Second)
	for _, pod := range pods {
		now, err := kube.CoreV1().Pods(pod.Namespace).Get(context.Background(), pod.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if n := containerStatus(now, "app").RestartCount; n != containerStatus(pod, "app").RestartCount+1 {
			t.Errorf("pod %s was recreated %d times by the one restart of policy %s, want once", pod.Name, n-containerStatus(pod, "app").RestartCount, p.Name)
		}
	}
}

// deferredPasses sums rejuv_policy_passes_deferred_total over the policies
// of namespace ns in a metrics page.
func deferredPasses(metrics, ns string) float64 {
	var n float64
	for line := range strings.Lines(metrics) {
		if !strings.HasPrefix(line, "rejuv_policy_passes_deferred_total{") || !strings.Contains(line, fmt.Sprintf("namespace=%q", ns)) {
			continue
		}
		var v float64
		if _, err := fmt.Sscan(line[strings.LastIndex(line, " ")+1:], &v); err == nil {
			n += v
		}
	}
	return n
}
