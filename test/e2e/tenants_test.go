package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/policy/policytest"
	"github.com/rejuv-dev/rejuv/test/deploy"
)

// editIn gives user Kubernetes' edit role in ns, as a namespace's
// developers have it.
func editIn(t *testing.T, ns, user string) {
	t.Helper()
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "edit-" + user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	if _, err := kube.RbacV1().RoleBindings(ns).Create(context.Background(), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// managerRestarts is how many times the manager's containers have
// restarted, by pod, and the pods whose last restart was for memory.
func managerRestarts(t *testing.T) (map[string]int32, []string) {
	t.Helper()
	pods, err := kube.CoreV1().Pods(deploy.Namespace).List(context.Background(), metav1.ListOptions{LabelSelector: deploy.HealerSelector})
	if err != nil {
		t.Fatal(err)
	}
	restarts := map[string]int32{}
	var oom []string
	for _, p := range pods.Items {
		for _, cs := range p.Status.ContainerStatuses {
			restarts[p.Name] += cs.RestartCount
			if term := cs.LastTerminationState.Terminated; term != nil && term.Reason == "OOMKilled" {
				oom = append(oom, p.Name)
			}
		}
	}
	return restarts, oom
}

// checkNoManagerRestarts: no manager container restarted since before
// (managerRestarts) was read.
func checkNoManagerRestarts(t *testing.T, before map[string]int32) {
	t.Helper()
	after, oom := managerRestarts(t)
	for pod, n := range after {
		if was, ok := before[pod]; ok && n != was {
			t.Errorf("manager pod %s restarted %d times during the test (last for memory: %v)", pod, n-was, oom)
		}
	}
}

// TestOneTenantCannotStallAnother: two namespaces, each with its own
// editor. The first's editor writes rules that loop, that fill memory and
// that pass a built-in's bound, and keeps changing them so that the
// manager evaluates them again and again. Meanwhile the second's ordinary
// policy decides on time and its request completes; the first's policies
// are halted by the sandbox each time, naming the rule; the forged reviews
// of the second's pod that the first sends from a pod all along are
// refused unread; neither editor can write in the other's namespace; no
// manager container restarts or is killed for its memory.
func TestOneTenantCannotStallAnother(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	before, _ := managerRestarts(t)

	noisy := newNamespace(t)
	labelledPods(t, noisy, "noisy", 3)
	quiet := labelledPod(t, "quiet")
	editIn(t, noisy, "tenant-a")
	editIn(t, quiet.Namespace, "tenant-b")
	a := impersonate(t, "tenant-a", nil, "")
	b := impersonate(t, "tenant-b", nil, "")

	if err := a.Create(ctx, builtinPolicy(quiet.Namespace, "intruder", "quiet", "max-age", nil)); !apierrors.IsForbidden(err) {
		t.Errorf("tenant-a writes a policy in tenant-b's namespace: %v, want Forbidden", err)
	}

	hostile := map[string]string{
		"loop":   policytest.Endless,
		"greedy": policytest.Greedy,
		"widths": hostileModule("", `count(sprintf("%*d", [1000000, 1])) > 0`),
	}
	for name, rego := range hostile {
		p := builtinPolicy(noisy, name, "noisy", "max-age", nil)
		p.Spec.Rules = []v1alpha1.Rule{{Name: name, Rego: rego}}
		if err := a.Create(ctx, p); err != nil {
			t.Fatalf("tenant-a's policy %s: %v", name, err)
		}
	}
	// Tenant A also sends forged reviews of tenant B's pod to the
	// webhooks from a pod of its namespace, all along.
	service, err := kube.CoreV1().Services(deploy.Namespace).Get(ctx, deploy.WebhookService, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	forged := webhookURLs(service.Spec.ClusterIP + ":443")
	const forgedEach = 400
	startForger(t, a, noisy, forged, forgedCRRReview(t, quiet), forgedEach)

	// Tenant A changes its policies every two seconds: each new
	// generation is evaluated again until the sandbox halts it.
	var names []string
	for name := range hostile {
		names = append(names, name)
	}
	stopChurn, generations := churnPolicies(a, noisy, names)

	p := builtinPolicy(quiet.Namespace, "age", "quiet", "max-age", map[string]string{"maxAge": `"15s"`, "jitter": `"2s"`})
	if err := b.Create(ctx, p); err != nil {
		t.Fatalf("tenant-b's policy: %v", err)
	}
	crr := healedInPlace(t, quiet.Namespace, "age", quiet, "running for")
	stopChurn()
	started := containerStatus(quiet, "app").State.Running.StartedAt.Time
	late := crr.CreationTimestamp.Sub(started)
	t.Logf("tenant-b's request came %s after its container started (maxAge 15s, jitter 2s); tenant-a changed its policies %d times meanwhile", late, generations.Load())
	if generations.Load() < 15 {
		t.Errorf("premise: tenant-a changed its policies %d times while tenant-b's policy decided, want at least 15", generations.Load())
	}
	if late > 15*time.Second+2*time.Second+5*time.Second {
		t.Errorf("tenant-b's request came %s after its container started: want within maxAge and jitter (17 s) and a few evaluations", late)
	}

	checkHaltedBySandbox(t, rejuvStack(t).Client, noisy, names)
	for _, name := range names {
		if n := len(policyRequests(t, rejuvStack(t).Client, noisy, name)); n != 0 {
			t.Errorf("policy %s made %d requests, want none", name, n)
		}
	}

	checkForgedRefused(t, forgerAnswers(t, noisy), forged, forgedEach, quiet, containerStatus(quiet, "app").ContainerID)

	checkNoManagerRestarts(t, before)
}

// testTenantQueries: with Prometheus behind the manager, one namespace's
// editor stores the most queries a policy may have (16), each a subquery
// that makes Prometheus step through a minute of every series of its
// namespace at 100 ms, asked every second, and cannot store one that reads
// another namespace. Meanwhile another namespace's ordinary policy decides
// on time, and no manager container restarts.
func testTenantQueries(t *testing.T) {
	ctx := context.Background()
	before, _ := managerRestarts(t)
	noisy := newNamespace(t)
	labelledPods(t, noisy, "noisy", 2)
	quiet := labelledPod(t, "quiet")
	editIn(t, noisy, "tenant-q")
	a := impersonate(t, "tenant-q", nil, "")

	spy := builtinPolicy(noisy, "spy", "noisy", "max-age", nil)
	spy.Spec.Signals = []v1alpha1.Signal{{Name: "theirs", Query: fmt.Sprintf(`sum(container_memory_working_set_bytes{namespace=%q})`, quiet.Namespace)}}
	if err := a.Create(ctx, spy); err == nil || !strings.Contains(err.Error(), "spec.signals[0].query") {
		t.Errorf("tenant-q's query of tenant-b's namespace: %v, want it refused naming spec.signals[0].query", err)
	}
	heavy := builtinPolicy(noisy, "heavy", "noisy", "max-age", map[string]string{"maxAge": `"24h"`})
	for i := range 16 {
		heavy.Spec.Signals = append(heavy.Spec.Signals, v1alpha1.Signal{Name: fmt.Sprintf("q%d", i),
			Query: fmt.Sprintf(`max_over_time(count by (namespace, pod) ({__name__=~".+", id!="%d"})[1m:100ms])`, i)})
	}
	if err := a.Create(ctx, heavy); err != nil {
		t.Fatalf("tenant-q's heavy policy: %v", err)
	}

	p := builtinPolicy(quiet.Namespace, "age", "quiet", "max-age", map[string]string{"maxAge": `"15s"`, "jitter": `"2s"`})
	createPolicy(t, p)
	crr := healedInPlace(t, quiet.Namespace, "age", quiet, "running for")
	late := crr.CreationTimestamp.Sub(containerStatus(quiet, "app").State.Running.StartedAt.Time)
	got := readPolicy(t, rejuvStack(t).Client, noisy, "heavy")
	halted := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionHalted)
	t.Logf("tenant-b's request came %s after its container started (maxAge 15s, jitter 2s); tenant-q's heavy policy last evaluated %v, halted: %+v",
		late, got.Status.LastEvaluationTime, halted)
	if got.Status.LastEvaluationTime == nil && halted == nil {
		t.Errorf("premise: tenant-q's heavy policy was never evaluated, nor halted, while tenant-b's decided")
	}
	if late > 15*time.Second+2*time.Second+5*time.Second {
		t.Errorf("tenant-b's request came %s after its container started: want within maxAge and jitter (17 s) and a few evaluations", late)
	}
	checkNoManagerRestarts(t, before)
}
