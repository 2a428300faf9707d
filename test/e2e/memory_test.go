package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned/typed/metrics/v1beta1"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/test/deploy"
)

// The manager samples every 5s with windows of 2m (test/deploy/overlay);
// metrics-server scrapes the kubelet every 10s. The leak rule judges from
// a minute and five samples, with a fit of 0.9 (the default is 0.8).
var leakParams = map[string]string{
	"minObservation": `"60s"`, "minSamples": `5`, "minFit": `0.9`, "horizon": `"10m"`,
}

// TestMemoryHealing: the memory rules on the working set that the manager
// samples from metrics.k8s.io, served by metrics-server scraping the
// kubelet. Without metrics-server, the policy's status says which signal
// is missing and why, and nothing is recreated. With it, a steady leak is
// recreated in place before it reaches its limit; a sawtooth, a one-time
// step and a warm-up are judged and left alone; a plateau near the limit is
// recreated by memory-near-limit.
func TestMemoryHealing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	metrics, err := metricsclient.NewForConfig(restCfg)
	if err != nil {
		t.Fatal(err)
	}
	ms := &deploy.MetricsServer{Client: rejuvStack(t).Client}
	// A cluster kept from an earlier run may have it.
	if err := ms.Uninstall(ctx); err != nil {
		t.Fatal(err)
	}
	t.Run("without metrics-server", func(t *testing.T) {
		if _, err := metrics.PodMetricses("default").List(ctx, metav1.ListOptions{}); err == nil {
			t.Fatal("premise: the metrics API answers without metrics-server")
		}
		noMemory(t, "nometrics", "metrics.k8s.io: list the pod metrics of namespace ")
	})
	if t.Failed() {
		return
	}
	start := time.Now()
	if ms, err = deploy.InstallMetricsServer(ctx, cluster, rejuvStack(t).Client); err != nil {
		t.Fatal(err)
	}
	t.Logf("metrics-server serving in %s", time.Since(start).Round(time.Second))
	t.Cleanup(func() {
		if err := ms.Uninstall(context.Background()); err != nil {
			t.Error(err)
		}
	})
	// The three start together and are checked one after the other: one
	// slot of the suite's parallel tests, most of it waiting for windows
	// to fill.
	calm, leak, plateau := startCalmMemory(t), startSteadyLeak(t), startPlateau(t)
	t.Run("a sawtooth, a step and a warm-up are left alone", calm)
	t.Run("a steady leak is recreated before its limit", leak)
	t.Run("a plateau near the limit is recreated", plateau)
}

// noMemory runs a pod that holds nothing under a memory-near-limit policy
// that would recreate it at 1% of its limit, and waits until the policy's
// status says the memory signal is missing with a reason that starts with
// why; nothing may be recreated.
func noMemory(t *testing.T, app, why string) {
	t.Helper()
	pod := memoryPod(t, app, "--grow-rate=0")
	p := builtinPolicy(pod.Namespace, "near", app, "memory-near-limit", map[string]string{"fraction": `0.01`})
	createPolicy(t, p)
	c := rejuvStack(t).Client
	var last []v1alpha1.RuleNoData
	waitWithin(t, "the policy's status to say the memory signal is missing, and why", time.Minute, func() bool {
		last = readPolicy(t, c, p.Namespace, p.Name).Status.NoData
		for _, nd := range last {
			if nd.Rule == "memory-near-limit" && nd.Signal == "memory" && nd.Pods == 1 && strings.HasPrefix(nd.Reason, why) {
				return true
			}
		}
		return false
	})
	t.Logf("status.noData: %+v", last)
	if n := len(policyRequests(t, c, p.Namespace, p.Name)); n != 0 {
		t.Errorf("%d requests without memory data", n)
	}
}

// memoryPod runs testapp with args and a 300Mi memory limit, labelled
// app=name, in a new namespace.
func memoryPod(t *testing.T, name string, args ...string) *corev1.Pod {
	t.Helper()
	p := testappPod(name)
	p.Labels = map[string]string{"app": name}
	p.Spec.Containers[0].Args = args
	p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("300Mi")}
	return createPod(t, newNamespace(t), p)
}

// startSteadyLeak: a container leaking 1Mi/s, with a 300Mi limit, is
// recreated in place by the leak rule's projection long before the limit:
// the kernel never kills it, its pod keeps its UID and IP, and the reason
// says how fast it grew and when it would have reached the limit.
func startSteadyLeak(t *testing.T) func(t *testing.T) {
	pod := memoryPod(t, "leak", "--grow-rate=1Mi")
	p := builtinPolicy(pod.Namespace, "leak", "leak", "memory-leak", leakParams)
	createPolicy(t, p)
	return func(t *testing.T) { checkSteadyLeak(t, pod, p) }
}

func checkSteadyLeak(t *testing.T, pod *corev1.Pod, p *v1alpha1.RecreatePolicy) {
	firstRequest(t, p, 3*time.Minute)
	crr := healedInPlace(t, pod.Namespace, p.Name, pod, "reaches 90% of the 300Mi memory limit in")
	reason := crr.Annotations["rejuv.dev/reason"]
	t.Logf("reason: %s", reason)
	if !strings.Contains(reason, "grows") || !strings.Contains(reason, "/h (r2 ") {
		t.Errorf("the reason %q does not say how fast the working set grew", reason)
	}
	healed, err := kube.CoreV1().Pods(pod.Namespace).Get(context.Background(), pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cs := containerStatus(healed, "app")
	if last := cs.LastTerminationState.Terminated; last == nil || last.Reason == "OOMKilled" {
		t.Errorf("the leaking container's end: %+v, want stopped by the request, not OOMKilled", last)
	}
	if healed.Status.PodIP != pod.Status.PodIP {
		t.Errorf("pod IP %s -> %s, want it kept", pod.Status.PodIP, healed.Status.PodIP)
	}
	// What the container held when it was stopped: the request's
	// creation, against its start and its rate.
	grown := crr.CreationTimestamp.Sub(containerStatus(pod, "app").State.Running.StartedAt.Time)
	t.Logf("recreated %s after the container started, at about %dMi of 300Mi", grown.Round(time.Second), int(grown.Seconds()))
	if grown > 200*time.Second {
		t.Errorf("recreated %s after the start: past 200Mi of the 300Mi limit", grown)
	}
}

// firstRequest waits for the policy's first request, the status in the
// failure.
func firstRequest(t *testing.T, p *v1alpha1.RecreatePolicy, limit time.Duration) {
	t.Helper()
	c := rejuvStack(t).Client
	deadline := time.Now().Add(limit)
	for len(policyRequests(t, c, p.Namespace, p.Name)) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no request within %s; policy status %+v", limit, readPolicy(t, c, p.Namespace, p.Name).Status)
		}
		time.Sleep(time.Second)
	}
}

// startCalmMemory: a sawtooth (a heap growing 2Mi/s and freed every 35s),
// a one-time step (100Mi after 50s) and a warm-up (150Mi along a saturating
// curve of time constant 30s, a cache filling) are judged over full windows
// and never recreated: the first two do not fit a line, the warm-up fits
// one while it rises but slows down (the parabola through the 2m window
// grows at its end at a small part of its pace at the start, e^-4 along the
// curve itself: memory-leak's minSustained is 0.8).
func startCalmMemory(t *testing.T) func(t *testing.T) {
	ns := newNamespace(t)
	var pods []*corev1.Pod
	for name, args := range map[string][]string{
		"sawtooth": {"--grow-rate=2Mi", "--free-every=35s"},
		"step":     {"--grow-after=50s", "--grow-rate=100Mi", "--grow-limit=100Mi"},
		"warm-up":  {"--warm-up=150Mi", "--warm-up-time=30s"},
	} {
		p := testappPod(name)
		p.Labels = map[string]string{"app": "calm"}
		p.Spec.Containers[0].Args = args
		p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("300Mi")}
		pods = append(pods, createPod(t, ns, p))
	}
	p := builtinPolicy(ns, "leak", "calm", "memory-leak", leakParams)
	createPolicy(t, p)
	return func(t *testing.T) { checkCalmMemory(t, pods, p) }
}

func checkCalmMemory(t *testing.T, pods []*corev1.Pod, p *v1alpha1.RecreatePolicy) {
	c, ns := rejuvStack(t).Client, p.Namespace
	// Judged, with full history, for a minute past the first full
	// window: the step, the teeth and the warm-up's rise (95% of its size
	// after 90s) pass through the 2m window.
	var step, warming time.Time
	for _, pod := range pods {
		switch pod.Name {
		case "step":
			step = containerStatus(pod, "app").State.Running.StartedAt.Add(50 * time.Second)
		case "warm-up":
			warming = containerStatus(pod, "app").State.Running.StartedAt.Time
		}
	}
	judgedSince := time.Time{}
	waitWithin(t, "both pods judged with a full window", 3*time.Minute, func() bool {
		s := readPolicy(t, c, ns, p.Name).Status
		if s.LastEvaluationTime == nil || len(s.NoData) != 0 {
			return false
		}
		judgedSince = s.LastEvaluationTime.Time
		return true
	})
	// The step is inside the window from its time for the window's 2m:
	// judged with full history while it was.
	if !judgedSince.Before(step.Add(2 * time.Minute)) {
		t.Fatalf("premise: first judged with a full window at %s, after the step of %s left the 2m window", judgedSince.Format(time.TimeOnly), step.Format(time.TimeOnly))
	}
	// The 2m window then held the warm-up from at least its first time
	// constant on: growth from 63% to 99% of 150Mi, about 55Mi.
	if !judgedSince.Before(warming.Add(150 * time.Second)) {
		t.Fatalf("premise: first judged with a full window at %s, after the warm-up that began at %s had left the 2m window", judgedSince.Format(time.TimeOnly), warming.Format(time.TimeOnly))
	}
	t.Logf("judged with full windows from %s; the step at %s; the warm-up from %s", judgedSince.Format(time.TimeOnly), step.Format(time.TimeOnly), warming.Format(time.TimeOnly))
	for time.Since(judgedSince) < time.Minute {
		if crrs := policyRequests(t, c, ns, p.Name); len(crrs) != 0 {
			t.Fatalf("request %s for %s: %s", crrs[0].Name, crrs[0].Spec.PodName, crrs[0].Annotations["rejuv.dev/reason"])
		}
		time.Sleep(2 * time.Second)
	}
	s := readPolicy(t, c, ns, p.Name).Status
	if len(s.NoData) != 0 || s.LastEvaluationTime == nil || time.Since(s.LastEvaluationTime.Time) > 10*time.Second {
		t.Errorf("premise: the pods were not judged to the end: noData %+v, last evaluation %v", s.NoData, s.LastEvaluationTime)
	}
	for _, pod := range pods {
		now, err := kube.CoreV1().Pods(ns).Get(context.Background(), pod.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if n := containerStatus(now, "app").RestartCount; n != 0 {
			t.Errorf("%s restarted %d times", pod.Name, n)
		}
	}
	// The warm-up did grow as a leak would have while the rule first
	// judged it: it holds past 140Mi now.
	if held := heldBytes(t, ns, "warm-up"); held < 140<<20 {
		t.Errorf("premise: the warm-up holds %dMi, want past 140Mi", held>>20)
	}
}

// heldBytes is what testapp in a pod holds on purpose, from its /state
// through the API server's pod proxy.
func heldBytes(t *testing.T, ns, pod string) int64 {
	t.Helper()
	raw, err := kube.CoreV1().Pods(ns).ProxyGet("http", pod, "8080", "state", nil).DoRaw(context.Background())
	if err != nil {
		t.Fatalf("read the state of testapp in %s/%s: %v", ns, pod, err)
	}
	var state struct {
		HeldBytes int64 `json:"heldBytes"`
	}
	if err := json.Unmarshal(raw, &state); err != nil {
		t.Fatalf("the state of testapp in %s/%s: %v: %s", ns, pod, err, raw)
	}
	return state.HeldBytes
}

// startPlateau: a container that holds 240Mi of its 300Mi limit (80%) is
// recreated by memory-near-limit at a fraction of 0.75.
func startPlateau(t *testing.T) func(t *testing.T) {
	pod := memoryPod(t, "plateau", "--grow-rate=20Mi", "--grow-limit=240Mi")
	p := builtinPolicy(pod.Namespace, "near", "plateau", "memory-near-limit", map[string]string{"fraction": `0.75`})
	createPolicy(t, p)
	return func(t *testing.T) { checkPlateau(t, pod, p) }
}

func checkPlateau(t *testing.T, pod *corev1.Pod, p *v1alpha1.RecreatePolicy) {
	firstRequest(t, p, 2*time.Minute)
	crr := healedInPlace(t, pod.Namespace, p.Name, pod, "of the 300Mi memory limit (threshold 75%)")
	if crr.Status.Phase != v1beta1.PhaseCompleted {
		t.Errorf("request %s: %s", crr.Name, crr.Status.Phase)
	}
	t.Logf("reason: %s", crr.Annotations["rejuv.dev/reason"])
}
