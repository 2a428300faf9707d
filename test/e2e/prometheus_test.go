package e2e

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/test/cluster/harness"
	"github.com/rejuv-dev/rejuv/test/deploy"
)

// signalsRule recreates a pod whose containers hold more than 40Mi
// together, by a pod-level signal, saying what the container-level one
// reads; rule broken reads a signal whose query does not parse.
const signalsRule = `package signals
import rego.v1
recreate contains {"container": c.name, "reason": sprintf("pod holds %d MiB, app %d MiB", [round(input.signals.podBytes / 1048576), round(c.signals.appBytes / 1048576)])} if {
	some c in input.containers
	input.signals.podBytes > 40 * 1048576
}
`

const brokenRule = `package broken
import rego.v1
recreate contains c.name if {
	some c in input.containers
	not input.signals.broken
}
`

// testSignals: a policy's PromQL queries reach its rules per pod and per
// container, from the real Prometheus, limited to the policy's namespace
// whether or not they say so; a query Prometheus fails is no data with
// Prometheus's error, and its rule, which would match its absence,
// recreates nothing. A tenant (the namespace's editor) cannot store a
// query that reads another namespace.
func testSignals(t *testing.T) {
	pod := memoryPod(t, "signals", "--grow-rate=50Mi", "--grow-limit=50Mi")
	asEditor(t, pod.Namespace)
	tenant := impersonate(t, editorUser, nil, "")
	spy := builtinPolicy(pod.Namespace, "spy", "signals", "max-age", nil)
	spy.Spec.Signals = []v1alpha1.Signal{{Name: "theirs",
		Query: `label_replace(sum(container_memory_working_set_bytes{namespace="rejuv-system"}), "namespace", "` + pod.Namespace + `", "", "")`}}
	err := tenant.Create(context.Background(), spy)
	if err == nil || !strings.Contains(err.Error(), "spec.signals[0].query") || !strings.Contains(err.Error(), `reads no series of namespace `+pod.Namespace) {
		t.Errorf("a tenant's query of another namespace: %v, want it refused naming spec.signals[0].query", err)
	}
	p := builtinPolicy(pod.Namespace, "signals", "signals", "max-age", nil)
	p.Spec.Rules = []v1alpha1.Rule{{Name: "big", Rego: signalsRule}, {Name: "broken", Rego: brokenRule}}
	p.Spec.Signals = []v1alpha1.Signal{
		// No namespace matcher: Rejuv adds the policy's.
		{Name: "podBytes", Query: `sum by (namespace, pod) (container_memory_working_set_bytes{container!="",container!="POD"})`},
		{Name: "appBytes", Query: fmt.Sprintf(`container_memory_working_set_bytes{namespace=%q,container="app"}`, pod.Namespace)},
		// PromQL, but Prometheus fails it: the regular expression is
		// compiled when the query runs.
		{Name: "broken", Query: `label_replace(container_memory_working_set_bytes{container="app"}, "x", "$1", "y", "(")`},
	}
	if err := tenant.Create(context.Background(), p); err != nil {
		t.Fatalf("the tenant's policy: %v", err)
	}
	firstRequest(t, p, time.Minute)
	crr := healedInPlace(t, pod.Namespace, p.Name, pod, "big: app: pod holds ")
	t.Logf("reason: %s", crr.Annotations["rejuv.dev/reason"])
	if reason := crr.Annotations["rejuv.dev/reason"]; strings.Contains(reason, "broken") {
		t.Errorf("the rule of the broken signal matched: %s", reason)
	}
	var broken *v1alpha1.RuleNoData
	for _, nd := range readPolicy(t, rejuvStack(t).Client, p.Namespace, p.Name).Status.NoData {
		if nd.Rule == "broken" {
			broken = &nd
		}
	}
	if broken == nil || broken.Signal != "signals.broken" || !strings.Contains(broken.Reason, "the query of signal broken failed: ") || !strings.Contains(broken.Reason, "invalid regular expression") {
		t.Errorf("the broken signal's no data: %+v, want signals.broken with Prometheus's error", broken)
	}
}

// useManagerArgs restarts the manager with args added to its own, and
// restores them when the test ends; it waits until the stack is ready
// each time.
func useManagerArgs(t *testing.T, args ...string) {
	t.Helper()
	s := rejuvStack(t)
	ctx := context.Background()
	d, err := s.Kube.AppsV1().Deployments(deploy.Namespace).Get(ctx, deploy.HealerDeployment, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	original := slices.Clone(d.Spec.Template.Spec.Containers[0].Args)
	set := func(args []string) {
		d, err := s.Kube.AppsV1().Deployments(deploy.Namespace).Get(ctx, deploy.HealerDeployment, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		d.Spec.Template.Spec.Containers[0].Args = args
		if _, err := s.Kube.AppsV1().Deployments(deploy.Namespace).Update(ctx, d, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("set the manager's arguments: %v", err)
		}
		if err := s.WaitReady(ctx); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { set(original) })
	set(append(slices.Clone(original), args...))
}

// overWindow reads the window a memory-leak reason says it judged from.
var overWindow = regexp.MustCompile(`\(r2 [0-9.]+ over ([0-9hms]+)[;)]`)

// TestMemoryFromPrometheus: a leak's policy is in place while the
// manager has no memory source that answers (metrics.k8s.io without
// metrics-server); the manager restarts with Prometheus as its source (a
// real Prometheus scraping the kubelet's cAdvisor endpoint), and the new
// leader judges the leak at once from the history Prometheus kept: the
// request comes sooner after the leader started than the rule's
// minObservation, from a window of a minute or more; a plateau near the
// limit is recreated by memory-near-limit. A policy's signals reach its
// rules. (The shapes that are no leak, a sawtooth, a step and a warm-up,
// are TestMemoryHealing's: the rule judges the same windows whatever
// filled them.) Without an answer
// from Prometheus, the policy's status says why, and nothing is recreated.
// Not parallel: the manager restarts with other flags, twice.
func TestMemoryFromPrometheus(t *testing.T) {
	disturbs(t)
	ctx := context.Background()
	// A cluster kept from an earlier run may have it.
	if err := (&deploy.MetricsServer{Client: rejuvStack(t).Client}).Uninstall(ctx); err != nil {
		t.Fatal(err)
	}
	prom, err := cluster.StartPrometheus(ctx, harness.PrometheusOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if prom != nil {
			_ = prom.Stop()
		}
	}()
	pod := memoryPod(t, "leak", "--grow-rate=1Mi")
	started := containerStatus(pod, "app").State.Running.StartedAt.Time
	p := builtinPolicy(pod.Namespace, "leak", "leak", "memory-leak", leakParams)
	createPolicy(t, p)
	// The plateau starts with the leak, and is judged from Prometheus's
	// history too.
	plateau := startPlateau(t)
	// Prometheus keeps the leak's history while the manager has nothing
	// to judge from; by the time the restarted manager leads (its
	// rollout takes about 20 s) the history spans about the rule's
	// minObservation (60 s), which the manager's own samples could not
	// span for another minute.
	time.Sleep(time.Until(started.Add(45 * time.Second)))
	if n := len(policyRequests(t, rejuvStack(t).Client, p.Namespace, p.Name)); n != 0 {
		t.Fatalf("premise: %d requests before the manager had a memory source", n)
	}
	useManagerArgs(t, "--memory-source=prometheus", "--prometheus-url="+prom.URL)
	// The new replicas are ready; one of them takes the lease.
	var leader *corev1.Pod
	waitWithin(t, "a leader among the restarted replicas", time.Minute, func() bool {
		leader, err = rejuvStack(t).Leader(ctx)
		return err == nil && leader.DeletionTimestamp == nil && slices.Contains(leader.Spec.Containers[0].Args, "--memory-source=prometheus")
	})
	leaderSince := leader.Status.StartTime.Time
	firstRequest(t, p, time.Minute)
	crr := healedInPlace(t, pod.Namespace, p.Name, pod, "reaches 90% of the 300Mi memory limit in")
	reason := crr.Annotations["rejuv.dev/reason"]
	t.Logf("reason: %s", reason)
	m := overWindow.FindStringSubmatch(reason)
	if m == nil {
		t.Fatalf("the reason %q does not say the window it judged from", reason)
	}
	window, err := time.ParseDuration(m[1])
	if err != nil {
		t.Fatal(err)
	}
	managerFor := crr.CreationTimestamp.Sub(leaderSince)
	t.Logf("judged from %s of history, %s after the leader started", window, managerFor.Round(time.Second))
	if window < time.Minute || managerFor >= time.Minute {
		t.Errorf("judged from %s, %s after the leader started: want a window of a minute or more, within the minute the rule needs of history", window, managerFor)
	}

	t.Run("a plateau near the limit is recreated", plateau)
	t.Run("signals", testSignals)
	t.Run("one tenant's queries do not stall another", testTenantQueries)

	// Prometheus gone: no data, with the reason, and nothing recreated.
	if err := prom.Stop(); err != nil {
		t.Error(err)
	}
	prom = nil
	noMemory(t, "quiet", "prometheus: query ")
}
