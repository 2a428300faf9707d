package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// policyRequests lists the requests a policy created.
func policyRequests(t *testing.T, c client.Client, ns, policy string) []v1beta1.ContainerRecreateRequest {
	t.Helper()
	list := &v1beta1.ContainerRecreateRequestList{}
	if err := c.List(context.Background(), list, client.InNamespace(ns), client.MatchingLabels{"rejuv.dev/policy": policy}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func readPolicy(t *testing.T, c client.Client, ns, name string) *v1alpha1.RecreatePolicy {
	t.Helper()
	p := &v1alpha1.RecreatePolicy{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPolicyRollingRestart: a scheduled run restarts a 6-replica Deployment
// spread over both nodes two pods at a time, counted across the nodes,
// each container exactly once, in place.
func TestPolicyRollingRestart(t *testing.T) {
	t.Parallel()
	stack := rejuvStack(t)
	c := stack.Client
	ctx := context.Background()
	ns := newNamespace(t)
	secondNode(t)
	before := testappDeploymentWith(t, c, ns, "web", 6, func(spec *corev1.PodSpec) {
		spreadOverNodes("web")(spec)
		readinessUnderLoad(spec)
	})
	perNode := map[string]int{}
	for _, p := range before {
		perNode[p.Spec.NodeName]++
	}
	if len(perNode) != len(cluster.Nodes()) {
		t.Fatalf("premise: the pods run on %v, want every node", perNode)
	}

	if err := c.Create(ctx, &v1alpha1.RecreatePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rolling"},
		Spec: v1alpha1.RecreatePolicySpec{
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Schedule: &v1alpha1.Schedule{Cron: "* * * * *", TimeZone: "Asia/Kolkata"},
			Rollout:  v1alpha1.Rollout{MaxUnavailable: new(intstr.FromInt32(2))},
		},
	}); err != nil {
		t.Fatal(err)
	}
	// Beside it, a policy whose next run depends on its time zone (and
	// that selects no pod): 09:00 in Kolkata is 03:30 UTC.
	if err := c.Create(ctx, &v1alpha1.RecreatePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kolkata"},
		Spec: v1alpha1.RecreatePolicySpec{
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "none"}},
			Schedule: &v1alpha1.Schedule{Cron: "0 9 * * *", TimeZone: "Asia/Kolkata"},
		},
	}); err != nil {
		t.Fatal(err)
	}
	kolkata, err := time.LoadLocation("Asia/Kolkata")
	if err != nil {
		t.Fatal(err)
	}
	local := time.Now().In(kolkata)
	nine := time.Date(local.Year(), local.Month(), local.Day(), 9, 0, 0, 0, kolkata)
	if !nine.After(time.Now()) {
		nine = nine.AddDate(0, 0, 1)
	}
	waitFor(t, "nextScheduleTime of the Kolkata policy", func() bool {
		next := readPolicy(t, c, ns, "kolkata").Status.NextScheduleTime
		return next != nil && next.Time.Equal(nine)
	})

	next := time.Now().Truncate(time.Minute).Add(time.Minute)
	deadline := time.Now().Add(20 * time.Second)
	for {
		p := readPolicy(t, c, ns, "rolling")
		if p.Status.NextScheduleTime != nil {
			if !p.Status.NextScheduleTime.Time.Equal(next) && !p.Status.NextScheduleTime.Time.Equal(next.Add(time.Minute)) {
				t.Fatalf("nextScheduleTime %s, want the next minute %s", p.Status.NextScheduleTime.UTC(), next.UTC())
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no nextScheduleTime in the status")
		}
		time.Sleep(200 * time.Millisecond)
	}

	// Sample availability until the run completes.
	stopWatch := watchUnavailable(t, c, ns, map[string]string{"app": "web"})
	defer stopWatch()
	run := finishRun(t, c, ns, "rolling")
	out := stopWatch()
	if run.State != v1alpha1.RunCompleted || run.Pods != 6 {
		t.Fatalf("run %+v, want Completed over 6 pods", run)
	}
	if out.most > 2 {
		t.Errorf("%d pods were unavailable at once, maxUnavailable is 2: %s", out.most, out.worst)
	}
	perPod := requestsPerPod(t, c, ns, "rolling", run)
	after := waitPods(t, c, ns, "app=web", 6)
	for _, b := range before {
		a := after[b.Name]
		if a == nil || a.UID != b.UID || a.Status.PodIP != b.Status.PodIP {
			t.Errorf("pod %s replaced or moved: before %s %s, after %+v", b.Name, b.UID, b.Status.PodIP, a)
			continue
		}
		if perPod[b.Name] != 1 || containerStatus(a, "app").RestartCount != containerStatus(b, "app").RestartCount+1 {
			t.Errorf("pod %s: %d requests in the run, restartCount %d -> %d; want 1 and +1", b.Name, perPod[b.Name], containerStatus(b, "app").RestartCount, containerStatus(a, "app").RestartCount)
		}
	}
}

// testappDeployment creates a Deployment of replicas testapp pods labelled
// app=name and returns them, Running and Ready, by name.
func testappDeployment(t *testing.T, c client.Client, ns, name string, replicas int32) map[string]*corev1.Pod {
	t.Helper()
	return testappDeploymentWith(t, c, ns, name, replicas, func(*corev1.PodSpec) {})
}

// spreadOverNodes has the pods labelled app=name spread evenly over the
// cluster's nodes (nodes tainted against them, as a NotReady one is, do
// not count).
func spreadOverNodes(name string) func(*corev1.PodSpec) {
	return func(spec *corev1.PodSpec) {
		spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.DoNotSchedule,
			LabelSelector:    &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			NodeTaintsPolicy: new(corev1.NodeInclusionPolicyHonor),
		}}
	}
}

// testappDeploymentWith is testappDeployment with its pods' spec changed.
func testappDeploymentWith(t *testing.T, c client.Client, ns, name string, replicas int32, change func(*corev1.PodSpec)) map[string]*corev1.Pod {
	t.Helper()
	spec := testappPod(name).Spec
	change(&spec)
	labels := map[string]string{"app": name}
	if err := c.Create(context.Background(), &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: new(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}); err != nil {
		t.Fatal(err)
	}
	return waitPods(t, c, ns, "app="+name, int(replicas))
}

// finishRun waits up to 3 minutes for the policy's run to end, then
// suspends the policy so that no second run starts, and returns the run.
func finishRun(t *testing.T, c client.Client, ns, policy string) *v1alpha1.Run {
	t.Helper()
	var run *v1alpha1.Run
	deadline := time.Now().Add(3 * time.Minute)
	for run == nil || run.State == v1alpha1.RunRunning {
		if time.Now().After(deadline) {
			t.Fatalf("the run of %s/%s did not end: %+v", ns, policy, run)
		}
		time.Sleep(500 * time.Millisecond)
		run = readPolicy(t, c, ns, policy).Status.Run
	}
	// The manager writes the policy's status after every pass: read it
	// again on a conflict.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p := readPolicy(t, c, ns, policy)
		p.Spec.Suspend = true
		return c.Update(context.Background(), p)
	}); err != nil {
		t.Fatal(err)
	}
	return run
}

// requestsPerPod counts the policy's requests of the run, by pod.
func requestsPerPod(t *testing.T, c client.Client, ns, policy string, run *v1alpha1.Run) map[string]int {
	t.Helper()
	perPod := map[string]int{}
	for _, crr := range policyRequests(t, c, ns, policy) {
		if crr.Annotations["rejuv.dev/run"] == run.ScheduledTime.UTC().Format(time.RFC3339) {
			perPod[crr.Spec.PodName]++
		}
	}
	return perPod
}

// watchPods calls sample every period until stop is called, with the
// pods matching labels and which of them have a request in flight (by
// name), both as of one revision of the store: the requests are read at
// the revision the pods were read at, so that a pod's readiness and
// another's request, read a throttled second apart, never make one
// instant that did not exist. A read that fails skips its sample; stop
// fails the test when fewer than half the samples were taken, as what
// they counted then proves nothing.
func watchPods(t *testing.T, c client.Client, ns string, labels map[string]string, period time.Duration, sample func(pods []corev1.Pod, busy map[string]bool)) (stop func()) {
	ctx := context.Background()
	var tried, taken int
	stopEvery := every(period, func() {
		tried++
		pods := &corev1.PodList{}
		if c.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels(labels)) != nil {
			return
		}
		crrs := &v1beta1.ContainerRecreateRequestList{}
		atPods := &client.ListOptions{Namespace: ns, Raw: &metav1.ListOptions{
			ResourceVersion: pods.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact,
		}}
		if c.List(ctx, crrs, atPods) != nil {
			return
		}
		taken++
		busy := map[string]bool{}
		for _, crr := range crrs.Items {
			if crr.Status.Phase != v1beta1.PhaseCompleted {
				busy[crr.Spec.PodName] = true
			}
		}
		sample(pods.Items, busy)
	})
	return func() {
		stopEvery()
		if taken == 0 || taken < tried/2 {
			t.Errorf("watching the pods of %s: %d of %d reads of pods and requests at one revision succeeded; what was counted proves nothing", ns, taken, tried)
		}
	}
}

// every calls sample every period, in a goroutine of its own, until stop
// is called; stop returns once the last call has returned.
func every(period time.Duration, sample func()) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-done:
				return
			case <-time.After(period):
			}
			sample()
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(done) })
		<-finished
	}
}

// outOfService is what watchUnavailable saw: the most pods unavailable at
// once, and which they were and why in the first sample that saw that many.
type outOfService struct {
	most  int
	worst string
}

// watchUnavailable samples, every 200 ms until stop is called, how many of
// the pods matching labels are not Ready or have a request in flight, and
// stop returns the most seen at once.
func watchUnavailable(t *testing.T, c client.Client, ns string, labels map[string]string) (stop func() outOfService) {
	var seen outOfService
	stopWatch := watchPods(t, c, ns, labels, 200*time.Millisecond, func(pods []corev1.Pod, busy map[string]bool) {
		var out []string
		for i := range pods {
			if p := &pods[i]; busy[p.Name] {
				out = append(out, p.Name+" (a request in flight)")
			} else if !podReady(true)(p) {
				out = append(out, fmt.Sprintf("%s (no request in flight: %s)", p.Name, describeStatus(p)))
			}
		}
		if len(out) > seen.most {
			seen = outOfService{most: len(out), worst: strings.Join(out, "; ")}
		}
	})
	return func() outOfService {
		stopWatch()
		return seen
	}
}

// waitFor polls cond for up to 30 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitWithin(t, what, 30*time.Second, cond)
}

// waitWithin polls cond for up to limit.
func waitWithin(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitPods waits until n pods match the selector, all Running and Ready,
// and returns them by name.
func waitPods(t *testing.T, c client.Client, ns, selector string, n int) map[string]*corev1.Pod {
	t.Helper()
	sel, err := metav1.ParseToLabelSelector(selector)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := metav1.LabelSelectorAsSelector(sel)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		pods := &corev1.PodList{}
		if err := c.List(context.Background(), pods, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: s}); err != nil {
			t.Fatal(err)
		}
		out := map[string]*corev1.Pod{}
		for i := range pods.Items {
			if p := &pods.Items[i]; p.DeletionTimestamp == nil && podReady(true)(p) {
				out[p.Name] = p
			}
		}
		if len(out) == n && len(pods.Items) == n {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d pods %s ready in %s", len(out), n, selector, ns)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestPolicyHealsStuckReadiness: a testapp that stops being ready is
// recreated by stuck-readiness after notReadyFor, not before, and is Ready
// again; its healthy twin is left alone.
func TestPolicyHealsStuckReadiness(t *testing.T) {
	t.Parallel()
	stack := rejuvStack(t)
	c := stack.Client
	ctx := context.Background()
	ns := newNamespace(t)
	var pods []*corev1.Pod
	for _, name := range []string{"sick", "twin"} {
		p := testappPod(name)
		p.Labels = map[string]string{"app": "shop"}
		pods = append(pods, createPod(t, ns, p))
	}
	if err := c.Create(ctx, &v1alpha1.RecreatePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "heal"},
		Spec: v1alpha1.RecreatePolicySpec{
			Selector:           metav1.LabelSelector{MatchLabels: map[string]string{"app": "shop"}},
			Rules:              []v1alpha1.Rule{{Name: "stuck", Builtin: "stuck-readiness", Parameters: map[string]apiextensionsv1.JSON{"notReadyFor": {Raw: []byte(`"8s"`)}}}},
			EvaluationInterval: &metav1.Duration{Duration: time.Second},
			Limits:             v1alpha1.Limits{MaxMatchingPercent: new(int32(50))},
		},
	}); err != nil {
		t.Fatal(err)
	}
	control(t, pods[0], "ready=false")
	notReady := time.Now()
	waitPod(t, ns, "sick", "not ready", podReady(false))
	var crr *v1beta1.ContainerRecreateRequest
	deadline := time.Now().Add(time.Minute)
	for crr == nil {
		if time.Now().After(deadline) {
			t.Fatalf("no request after a minute; policy status %+v", readPolicy(t, c, ns, "heal").Status)
		}
		if crrs := policyRequests(t, c, ns, "heal"); len(crrs) > 0 {
			crr = &crrs[0]
		}
		time.Sleep(200 * time.Millisecond)
	}
	if waited := crr.CreationTimestamp.Sub(notReady.Truncate(time.Second)); waited < 8*time.Second {
		t.Errorf("recreated %s after the pod stopped being ready, before notReadyFor 8s", waited)
	}
	if crr.Spec.PodName != "sick" || !strings.Contains(crr.Annotations["rejuv.dev/reason"], "not ready for") {
		t.Errorf("request for %s, reason %q", crr.Spec.PodName, crr.Annotations["rejuv.dev/reason"])
	}
	healed := waitPod(t, ns, "sick", "Ready again after its recreation", func(p *corev1.Pod) bool {
		return podReady(true)(p) && containerStatus(p, "app").RestartCount == 1
	})
	if healed.UID != pods[0].UID {
		t.Error("the pod was replaced, not healed in place")
	}
	twin := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "twin"}, twin); err != nil {
		t.Fatal(err)
	}
	if containerStatus(twin, "app").RestartCount != 0 {
		t.Errorf("the healthy twin restarted %d times", containerStatus(twin, "app").RestartCount)
	}
	if n := len(policyRequests(t, c, ns, "heal")); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
	cond := meta.FindStatusCondition(readPolicy(t, c, ns, "heal").Status.Conditions, v1alpha1.ConditionReady)
	if cond == nil || cond.Status != metav1.ConditionTrue {
		t.Errorf("Ready condition %+v", cond)
	}
}
