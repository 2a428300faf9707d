package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// builtinPolicy is a policy of one built-in rule over the pods labelled
// app=app, evaluated every second.
func builtinPolicy(ns, name, app, builtin string, params map[string]string) *v1alpha1.RecreatePolicy {
	raw := map[string]apiextensionsv1.JSON{}
	for k, v := range params {
		raw[k] = apiextensionsv1.JSON{Raw: []byte(v)}
	}
	return &v1alpha1.RecreatePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.RecreatePolicySpec{
			Selector:           metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
			Rules:              []v1alpha1.Rule{{Name: builtin, Builtin: builtin, Parameters: raw}},
			EvaluationInterval: &metav1.Duration{Duration: time.Second},
		},
	}
}

// labelledPod runs a Ready testapp pod named and labelled app=name in a new
// namespace.
func labelledPod(t *testing.T, name string) *corev1.Pod {
	t.Helper()
	p := testappPod(name)
	p.Labels = map[string]string{"app": name}
	return createPod(t, newNamespace(t), p)
}

// createPolicy creates p with the stack's client.
func createPolicy(t *testing.T, p *v1alpha1.RecreatePolicy) {
	t.Helper()
	if err := rejuvStack(t).Client.Create(context.Background(), p); err != nil {
		t.Fatalf("create RecreatePolicy %s/%s: %v", p.Namespace, p.Name, err)
	}
}

// healedInPlace waits for the policy's one request for the pod, its
// success and the pod's container recreated in place once; it checks that
// the policy's status explains the recreation with reason, and that no
// second request follows within a few more evaluations.
func healedInPlace(t *testing.T, ns, policy string, pod *corev1.Pod, reason string) *v1beta1.ContainerRecreateRequest {
	t.Helper()
	c := rejuvStack(t).Client
	var crr *v1beta1.ContainerRecreateRequest
	deadline := time.Now().Add(time.Minute)
	for crr == nil || crr.Status.Phase != v1beta1.PhaseCompleted {
		if time.Now().After(deadline) {
			t.Fatalf("no completed request within a minute: %+v; policy status %+v", crr, readPolicy(t, c, ns, policy).Status)
		}
		if crrs := policyRequests(t, c, ns, policy); len(crrs) > 0 {
			crr = &crrs[0]
		}
		time.Sleep(200 * time.Millisecond)
	}
	if crr.Status.Result != v1beta1.ResultSucceeded || crr.Spec.PodName != pod.Name {
		t.Fatalf("request %s for pod %s ended %s: %s", crr.Name, crr.Spec.PodName, crr.Status.Result, crr.Status.Message)
	}
	if got := crr.Annotations["rejuv.dev/reason"]; !strings.Contains(got, reason) {
		t.Errorf("request's reason %q lacks %q", got, reason)
	}
	healed := waitPod(t, ns, pod.Name, "recreated in place", func(p *corev1.Pod) bool {
		cs := containerStatus(p, "app")
		return cs.RestartCount == containerStatus(pod, "app").RestartCount+1 && cs.State.Running != nil
	})
	if healed.UID != pod.UID || containerStatus(healed, "app").ContainerID == containerStatus(pod, "app").ContainerID {
		t.Errorf("pod %s: UID %s -> %s, container %s -> %s: want the same pod with a new container", pod.Name, pod.UID, healed.UID,
			containerStatus(pod, "app").ContainerID, containerStatus(healed, "app").ContainerID)
	}
	explained := false
	for _, d := range readPolicy(t, c, ns, policy).Status.RecentDecisions {
		explained = explained || d.Outcome == v1alpha1.OutcomeCreated && d.Request == crr.Name && strings.Contains(d.Reason, reason)
	}
	if !explained {
		t.Errorf("the policy's recent decisions do not explain request %s with %q: %+v", crr.Name, reason, readPolicy(t, c, ns, policy).Status.RecentDecisions)
	}
	time.Sleep(3 * time.Second)
	if n := len(policyRequests(t, c, ns, policy)); n != 1 {
		t.Errorf("%d requests, want 1 (the cooldown holds the rule back)", n)
	}
	return crr
}

// TestPolicyHealsStuckStartup: a container whose startup probe never
// passes is recreated by stuck-startup after startupFor, stopped at once
// although it never finished starting (the request forces it).
func TestPolicyHealsStuckStartup(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	p := testappPod("hung")
	p.Labels = map[string]string{"app": "hung"}
	p.Spec.Containers[0].ReadinessProbe = nil
	p.Spec.Containers[0].StartupProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/never", Port: intstr.FromInt32(8080)}},
		PeriodSeconds: 1, FailureThreshold: 1000,
	}
	if _, err := kube.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := waitPod(t, ns, "hung", "running, not started", func(p *corev1.Pod) bool {
		cs := containerStatus(p, "app")
		return cs.State.Running != nil && cs.Started != nil && !*cs.Started
	})
	createPolicy(t, builtinPolicy(ns, "heal", "hung", "stuck-startup", map[string]string{"startupFor": `"5s"`}))
	crr := healedInPlace(t, ns, "heal", pod, "startup not finished")
	if crr.Spec.Strategy == nil || !crr.Spec.Strategy.ForceRecreate {
		t.Errorf("request %s has strategy %+v, want forceRecreate", crr.Name, crr.Spec.Strategy)
	}
	if st := crr.Status.ContainerRecreateStates; len(st) != 1 || !st[0].IsKilled {
		t.Errorf("request %s container states %+v, want app killed", crr.Name, st)
	}
}

// TestPolicyRejuvenatesByMaxAge: a container older than maxAge (plus its
// pod's part of the jitter) is recreated, and not before.
func TestPolicyRejuvenatesByMaxAge(t *testing.T) {
	t.Parallel()
	pod := labelledPod(t, "old")
	createPolicy(t, builtinPolicy(pod.Namespace, "age", "old", "max-age", map[string]string{"maxAge": `"8s"`, "jitter": `"2s"`}))
	crr := healedInPlace(t, pod.Namespace, "age", pod, "running for")
	started := containerStatus(pod, "app").State.Running.StartedAt.Time
	if age := crr.CreationTimestamp.Sub(started); age < 8*time.Second {
		t.Errorf("recreated at age %s, before maxAge 8s", age)
	}
}

// TestPolicyCalmsRestartStorm: a container that crashed twice (by itself,
// not by Rejuv) is recreated by restart-storm with minRestarts 2, once.
func TestPolicyCalmsRestartStorm(t *testing.T) {
	t.Parallel()
	pod := labelledPod(t, "stormy")
	ns := pod.Namespace
	for i := range int32(2) {
		control(t, pod, "exit=3")
		pod = waitPod(t, ns, "stormy", "back after a crash", func(p *corev1.Pod) bool {
			return containerStatus(p, "app").RestartCount == i+1 && podReady(true)(p)
		})
	}
	createPolicy(t, builtinPolicy(ns, "storm", "stormy", "restart-storm", map[string]string{"minRestarts": "2", "window": `"10m"`}))
	healedInPlace(t, ns, "storm", pod, "restarted 2 times besides Rejuv's recreations")
}

// TestPolicyRunRespectsDisruptionBudget: a rolling run (a restart
// requested now, as kubectl rejuv restart does) with the default
// rollout (maxUnavailable 25%, two of eight pods) over a Deployment whose
// PodDisruptionBudget allows one disruption never has more than one pod
// unready or being recreated, and recreates each pod once. Seen before:
// two pods down at once, the budget's status counting a pod healthy until
// its container stopped.
func TestPolicyRunRespectsDisruptionBudget(t *testing.T) {
	t.Parallel()
	c := rejuvStack(t).Client
	ctx := context.Background()
	ns := newNamespace(t)
	before := testappDeploymentWith(t, c, ns, "budget", 8, readinessUnderLoad)
	budgetOfOne(t, c, ns, "budget", 8)
	if err := c.Create(ctx, &v1alpha1.RecreatePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rolling"},
		Spec: v1alpha1.RecreatePolicySpec{
			Selector:  metav1.LabelSelector{MatchLabels: map[string]string{"app": "budget"}},
			RestartAt: &metav1.Time{Time: time.Now()},
		},
	}); err != nil {
		t.Fatal(err)
	}
	stopWatch := watchUnavailable(t, c, ns, map[string]string{"app": "budget"})
	defer stopWatch()
	run := finishRun(t, c, ns, "rolling")
	out := stopWatch()
	if run.State != v1alpha1.RunCompleted || run.Pods != 8 || run.Recreated != 8 {
		t.Fatalf("run %+v, want Completed with 8 of 8 pods", run)
	}
	if out.most != 1 {
		t.Errorf("at most %d pods were unready or being recreated at once; the budget allows 1 (and the run must have taken one): %s", out.most, out.worst)
	}
	perPod := requestsPerPod(t, c, ns, "rolling", run)
	for name := range before {
		if perPod[name] != 1 {
			t.Errorf("pod %s: %d requests in the run, want 1", name, perPod[name])
		}
	}
}
