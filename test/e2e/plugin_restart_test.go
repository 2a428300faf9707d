package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// TestPluginRestartsOneContainerOfAPod: kubectl rejuv restart POD -c app
// --wait, run as a namespace's editor, recreates app in place and only
// app, follows the request to its end, and the request says who made it
// and why; a restart run again while one is in flight is refused.
func TestPluginRestartsOneContainerOfAPod(t *testing.T) {
	t.Parallel()
	c := rejuvStack(t).Client
	ns := newNamespace(t)
	asEditor(t, ns)
	before := createPod(t, ns, twoContainerPod("web"))

	run := kubectlRejuv(t, ns, "restart", "web", "-c", "app", "--wait", "--reason", "stuck after failover")
	if run.code != 0 {
		t.Fatalf("restart exited %d", run.code)
	}
	for _, want := range []string{"containerrecreaterequest.apps.kruise.io/web-", " created", "pod web: recreating app (containerrecreaterequest web-", "container app: Succeeded", "pod web: app recreated in "} {
		if !strings.Contains(run.stdout, want) {
			t.Errorf("stdout lacks %q", want)
		}
	}
	after := waitPod(t, ns, "web", "Ready again", podReady(true))
	if after.UID != before.UID {
		t.Fatal("the pod was replaced")
	}
	if got, was := containerStatus(after, "app").RestartCount, containerStatus(before, "app").RestartCount; got != was+1 {
		t.Errorf("app restartCount %d -> %d, want one recreation", was, got)
	}
	if got, was := containerStatus(after, "side").RestartCount, containerStatus(before, "side").RestartCount; got != was {
		t.Errorf("side restartCount %d -> %d, want untouched", was, got)
	}
	list := &v1beta1.ContainerRecreateRequestList{}
	if err := c.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Fatalf("%d requests, want 1", len(list.Items))
	}
	crr := list.Items[0]
	if crr.Labels["rejuv.dev/source"] != "kubectl" || crr.Annotations["rejuv.dev/reason"] != "stuck after failover" || len(crr.Spec.Containers) != 1 || crr.Spec.Containers[0].Name != "app" {
		t.Errorf("request %s: labels %v, reason %q, containers %+v", crr.Name, crr.Labels, crr.Annotations["rejuv.dev/reason"], crr.Spec.Containers)
	}

	// A restart while another recreation of the pod is in flight (one
	// that waits for its new container to run 20 s) is refused.
	if first := kubectlRejuv(t, ns, "create", "crr", "slow", "--pod", "web", "--containers", "side", "--minStartedSeconds", "20"); first.code != 0 {
		t.Fatalf("create crr slow: exit %d", first.code)
	}
	if second := kubectlRejuv(t, ns, "restart", "web", "-c", "side"); second.code != 1 || !strings.Contains(second.stderr, "has a recreation in flight (containerrecreaterequest slow") {
		t.Errorf("a restart while a recreation is in flight: exit %d", second.code)
	}
}

// TestPluginRollsOutADeploymentWithAPodDisruptionBudget: kubectl rejuv
// restart deployment/web --max-unavailable 2 --wait restarts each of the
// three pods once, in place; the PodDisruptionBudget (minAvailable 2)
// keeps it to one pod at a time, which the command says; it exits 0 with
// a summary. The rollout is a RecreatePolicy in the cluster, owned by the
// deployment; restarting again starts a new run of the same policy.
func TestPluginRollsOutADeploymentWithAPodDisruptionBudget(t *testing.T) {
	t.Parallel()
	c := rejuvStack(t).Client
	ctx := context.Background()
	ns := newNamespace(t)
	asEditor(t, ns)
	before := testappDeploymentWith(t, c, ns, "web", 3, readinessUnderLoad)
	if err := c.Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: new(intstr.FromInt32(2)),
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		},
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the PodDisruptionBudget to allow one disruption", func() bool {
		pdb := &policyv1.PodDisruptionBudget{}
		return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, pdb) == nil && pdb.Status.DisruptionsAllowed == 1
	})
	stop := watchUnavailable(t, c, ns, map[string]string{"app": "web"})

	run := kubectlRejuv(t, ns, "restart", "deployment/web", "--max-unavailable", "2", "--wait", "--timeout", "3m")
	out := stop()
	if run.code != 0 {
		t.Fatalf("restart exited %d", run.code)
	}
	for _, want := range []string{
		"recreatepolicy.rejuv.dev/restart-deployment-web created",
		"rolling restart of 3 pods of deployment/web requested, at most 2 unavailable at a time",
		"rolling restart of 3 pods started",
		"held back (DisruptionBudget)",
		"done: 3 of 3 pods recreated in ",
	} {
		if !strings.Contains(run.stdout, want) {
			t.Errorf("stdout lacks %q", want)
		}
	}
	if strings.Count(run.stdout, ": recreated in ") != 3 {
		t.Errorf("stdout shows %d pods recreated, want 3", strings.Count(run.stdout, ": recreated in "))
	}
	if out.most != 1 {
		t.Errorf("at most %d pods unavailable at once, want 1 (the PodDisruptionBudget's limit): %s", out.most, out.worst)
	}
	p := readPolicy(t, c, ns, "restart-deployment-web")
	if len(p.OwnerReferences) != 1 || p.OwnerReferences[0].Kind != "Deployment" || p.OwnerReferences[0].Name != "web" {
		t.Errorf("policy owners %+v, want the deployment", p.OwnerReferences)
	}
	if p.Status.Run == nil || !p.Status.Run.Requested || p.Status.Run.State != v1alpha1.RunCompleted {
		t.Fatalf("run %+v, want a requested run Completed", p.Status.Run)
	}
	recreatedOncePerPod(t, c, ns, "restart-deployment-web", "app=web", before, p.Status.Run)

	// Again: the same policy asks for a new run. (Not followed to its end:
	// the kubelet backs off 10 s before starting a container that exited
	// a moment ago; the envtest of restartAt checks the second run.)
	first := p.Status.Run.ScheduledTime
	again := kubectlRejuv(t, ns, "restart", "deployment/web")
	if again.code != 0 || !strings.Contains(again.stdout, "recreatepolicy.rejuv.dev/restart-deployment-web configured") {
		t.Fatalf("second restart: exit %d", again.code)
	}
	waitFor(t, "a second run of restart-deployment-web", func() bool {
		run := readPolicy(t, c, ns, "restart-deployment-web").Status.Run
		return run != nil && run.Requested && run.ScheduledTime.After(first.Time)
	})
}

// TestPluginDryRunsCreateNothing: every dry run of restart and create crr,
// client or server, prints what it would do and creates nothing; the
// server's dry run goes through the admission webhooks (a container the
// pod lacks is refused).
func TestPluginDryRunsCreateNothing(t *testing.T) {
	t.Parallel()
	c := rejuvStack(t).Client
	ctx := context.Background()
	ns := newNamespace(t)
	asEditor(t, ns)
	testappDeployment(t, c, ns, "web", 2)
	pods := waitPods(t, c, ns, "app=web", 2)
	var pod string
	for name := range pods {
		pod = name
		break
	}

	for _, args := range [][]string{
		{"restart", "deployment/web", "--dry-run=client"},
		{"restart", "deployment/web", "--dry-run=server"},
		{"restart", "-l", "app=web", "--dry-run=server", "-o", "yaml"},
		{"restart", pod, "--dry-run=client", "-o", "json"},
		{"restart", pod, "--dry-run=server"},
		{"create", "crr", "by-hand", "--pod", pod, "--dry-run=server"},
		{"create", "crr", "by-hand", "--pod", pod, "--dry-run"},
	} {
		run := kubectlRejuv(t, ns, args...)
		if run.code != 0 {
			t.Errorf("%v exited %d", args, run.code)
		}
	}
	if run := kubectlRejuv(t, ns, "restart", "deployment/web", "--dry-run=client"); !strings.Contains(run.stdout, "recreatepolicy.rejuv.dev/restart-deployment-web created (dry run)") ||
		!strings.Contains(run.stdout, "rolling restart of 2 pods of deployment/web would be requested") {
		t.Errorf("a client dry run of a deployment's restart does not say what it would do")
	}
	if run := kubectlRejuv(t, ns, "restart", pod, "--dry-run=server", "-c", "nope"); run.code == 0 || !strings.Contains(run.stderr, `no container "nope"`) {
		t.Errorf("a dry run naming a container the pod lacks: exit %d", run.code)
	}
	if run := kubectlRejuv(t, ns, "create", "crr", "bad", "--pod", pod, "--containers", "app", "--activeDeadlineSeconds", "2", "--dry-run=server"); run.code != 2 || !strings.Contains(run.stderr, "--activeDeadlineSeconds 2: must be at least 3") {
		t.Errorf("a deadline of 2 s: exit %d", run.code)
	}

	time.Sleep(2 * time.Second)
	policies := &v1alpha1.RecreatePolicyList{}
	requests := &v1beta1.ContainerRecreateRequestList{}
	if err := c.List(ctx, policies, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if err := c.List(ctx, requests, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(policies.Items) != 0 || len(requests.Items) != 0 {
		t.Errorf("after dry runs: %d policies, %d requests; want none", len(policies.Items), len(requests.Items))
	}
	for name, p := range pods {
		now := waitPod(t, ns, name, "still running", podReady(true))
		if containerStatus(now, "app").RestartCount != containerStatus(p, "app").RestartCount {
			t.Errorf("pod %s restarted during dry runs", name)
		}
	}
}

// TestPluginCreatesARequestWithKruisesFlags: kubectl rejuv create crr
// takes kubectl-kruise's flags and each of them reaches the request,
// --containers included: only the container named is recreated.
func TestPluginCreatesARequestWithKruisesFlags(t *testing.T) {
	t.Parallel()
	c := rejuvStack(t).Client
	ctx := context.Background()
	ns := newNamespace(t)
	asEditor(t, ns)
	before := createPod(t, ns, twoContainerPod("web"))

	run := kubectlRejuv(t, ns, "create", "ContainerRecreateRequest", "my-crr", "--pod=web", "--containers=side",
		"--unreadyGracePeriodSeconds=0", "--terminationGracePeriodSeconds=5", "--minStartedSeconds=1",
		"--failurePolicy=Ignore", "--orderedRecreate", "--activeDeadlineSeconds=60", "--ttlSecondsAfterFinished=600", "--save-config")
	if run.code != 0 || strings.TrimSpace(run.stdout) != "containerrecreaterequest.apps.kruise.io/my-crr created" {
		t.Fatalf("create crr: exit %d", run.code)
	}
	crr := &v1beta1.ContainerRecreateRequest{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "my-crr"}, crr); err != nil {
		t.Fatal(err)
	}
	s := crr.Spec.Strategy
	switch {
	case crr.Spec.PodName != "web" || len(crr.Spec.Containers) != 1 || crr.Spec.Containers[0].Name != "side":
		t.Errorf("pod %s containers %+v, want web's side", crr.Spec.PodName, crr.Spec.Containers)
	case s == nil || s.UnreadyGracePeriodSeconds == nil || *s.UnreadyGracePeriodSeconds != 0 || s.TerminationGracePeriodSeconds == nil || *s.TerminationGracePeriodSeconds != 5 ||
		s.MinStartedSeconds != 1 || s.FailurePolicy != v1beta1.FailurePolicyIgnore || !s.OrderedRecreate:
		t.Errorf("strategy %+v, not the flags'", s)
	case *crr.Spec.ActiveDeadlineSeconds != 60 || *crr.Spec.TTLSecondsAfterFinished != 600:
		t.Errorf("deadline %d ttl %d, want 60 and 600", *crr.Spec.ActiveDeadlineSeconds, *crr.Spec.TTLSecondsAfterFinished)
	case crr.Annotations["kubectl.kubernetes.io/last-applied-configuration"] == "":
		t.Error("--save-config left no last-applied-configuration")
	}
	done, _ := waitCompleted(t, c, crr, time.Minute)
	if done.Status.Result != v1beta1.ResultSucceeded {
		t.Fatalf("request ended %s: %s", done.Status.Result, done.Status.Message)
	}
	after := waitPod(t, ns, "web", "Ready again", podReady(true))
	if containerStatus(after, "side").RestartCount != containerStatus(before, "side").RestartCount+1 || containerStatus(after, "app").RestartCount != containerStatus(before, "app").RestartCount {
		t.Errorf("restart counts app %d->%d side %d->%d, want only side recreated",
			containerStatus(before, "app").RestartCount, containerStatus(after, "app").RestartCount, containerStatus(before, "side").RestartCount, containerStatus(after, "side").RestartCount)
	}

	// The printing and writing flags: -o jsonpath prints the request
	// created, --field-manager owns its fields, --validate=warn is taken;
	// without --containers every container is recreated.
	run = kubectlRejuv(t, ns, "create", "crr", "all", "--pod", "web", "-o", "jsonpath={.spec.containers[*].name}", "--field-manager", "ops-team", "--validate", "warn")
	if run.code != 0 || run.stdout != "app side" {
		t.Fatalf("create crr -o jsonpath: exit %d, printed %q, want the two containers", run.code, run.stdout)
	}
	all := &v1beta1.ContainerRecreateRequest{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "all"}, all); err != nil {
		t.Fatal(err)
	}
	managers := map[string]bool{}
	for _, f := range all.ManagedFields {
		managers[f.Manager] = true
	}
	if !managers["ops-team"] {
		t.Errorf("field managers %v, want ops-team", managers)
	}
}
