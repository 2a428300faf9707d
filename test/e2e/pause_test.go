package e2e

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/test/deploy"
	"github.com/rejuv-dev/rejuv/test/traffic"
)

// TestEmergencyStopHoldsARunUnderTrafficAndResumeFinishesIt: a rolling
// restart of four pods behind a Service runs under client traffic when an
// operator runs kubectl rejuv pause --all. Once it returns, no request is
// created, a request by hand is refused, every request ends and no pod
// stays out of its Service; the policy says it is paused. kubectl rejuv
// resume --all lets the run finish, each pod recreated once, and the
// clients never noticed. The pause is cluster-wide: the test runs alone.
func TestEmergencyStopHoldsARunUnderTrafficAndResumeFinishesIt(t *testing.T) {
	c := rejuvStack(t).Client
	// Its pods get the readiness gate: a restart takes them out of their
	// Service before it stops them.
	ns := gatedNamespace(t, c)
	asEditor(t, ns)
	web := map[string]string{"app": "web"}
	before := testappDeployment(t, c, ns, "web", 4)
	for _, p := range before {
		if !pods.HasReadinessGate(p) {
			t.Fatalf("premise: pod %s has no readiness gate in a namespace that opts in", p.Name)
		}
	}
	url := serviceFor(t, c, ns, "web", web)
	answered(t, url, before)
	stream, err := traffic.Start(url, "before", traffic.Options{Rate: 100, KeepAlive: false, Limit: 100 * 300})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Stop()
	resume := func() pluginRun {
		return kubectlRejuvAsAdmin(t, "resume", "--all", "--rejuv-namespace", deploy.Namespace)
	}
	// Whatever happens, the other tests run unpaused.
	t.Cleanup(func() { resume() })

	if run := kubectlRejuv(t, ns, "restart", "deployment/web"); run.code != 0 {
		t.Fatalf("kubectl rejuv restart exited %d", run.code)
	}
	const policy = "restart-deployment-web"
	waitFor(t, "the run's first request", func() bool { return len(policyRequests(t, c, ns, policy)) > 0 })
	stream.Phase("paused")
	paused := kubectlRejuvAsAdmin(t, "pause", "--all", "--rejuv-namespace", deploy.Namespace, "--reason", "e2e: emergency stop", "--timeout", "90s")
	if paused.code != 0 || !strings.Contains(paused.stdout, "the manager confirmed") {
		t.Fatalf("kubectl rejuv pause --all exited %d:\n%s%s", paused.code, paused.stdout, paused.stderr)
	}
	held := map[string]bool{}
	for _, crr := range policyRequests(t, c, ns, policy) {
		held[crr.Name] = true
	}

	// No request is created afterwards: several passes of the run (it is
	// looked at every 5 seconds) go by.
	refused := kubectlRejuv(t, ns, "restart", slices.Sorted(maps.Keys(before))[0])
	if refused.code == 0 || !strings.Contains(refused.stderr, "Rejuv is paused cluster-wide") || !strings.Contains(refused.stderr, "e2e: emergency stop") {
		t.Errorf("a request by hand while paused: exit %d, %q; want it refused, saying why", refused.code, refused.stderr)
	}
	waitWithin(t, "every request to end and every pod to be back in its Service", 2*time.Minute, func() bool {
		for _, crr := range policyRequests(t, c, ns, policy) {
			if crr.Status.Phase != v1beta1.PhaseCompleted {
				return false
			}
		}
		for _, p := range waitPods(t, c, ns, "app=web", 4) {
			if gate := pods.Condition(p, v1beta1.PodReadyCondition); !pods.Ready(p) || (gate != nil && gate.Status != corev1.ConditionTrue) {
				return false
			}
		}
		return true
	})
	time.Sleep(15 * time.Second)
	for _, crr := range policyRequests(t, c, ns, policy) {
		if !held[crr.Name] {
			t.Errorf("request %s for pod %s was created after kubectl rejuv pause --all returned", crr.Name, crr.Spec.PodName)
		}
	}
	p := readPolicy(t, c, ns, policy)
	ready := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionReady)
	if ready == nil || ready.Reason != v1alpha1.ReasonPaused || !strings.Contains(ready.Message, "e2e: emergency stop") {
		t.Errorf("Ready condition %+v while paused, want reason Paused quoting the reason", ready)
	}
	if p.Status.Run == nil || p.Status.Run.State != v1alpha1.RunRunning {
		t.Fatalf("premise: the run %+v was over before the pause; want it held in the middle", p.Status.Run)
	}

	stream.Phase("resumed")
	if run := resume(); run.code != 0 || !strings.Contains(run.stdout, "Rejuv resumed") {
		t.Fatalf("kubectl rejuv resume --all exited %d", run.code)
	}
	run := finishRun(t, c, ns, policy)
	if run.State != v1alpha1.RunCompleted || run.Recreated != 4 {
		t.Fatalf("run %+v after resuming, want Completed with 4 pods recreated", run)
	}
	after := waitPods(t, c, ns, "app=web", 4)
	for name, b := range before {
		a := after[name]
		if a == nil || a.UID != b.UID {
			t.Errorf("pod %s was replaced", name)
			continue
		}
		if got, was := containerStatus(a, "app").RestartCount, containerStatus(b, "app").RestartCount; got != was+1 {
			t.Errorf("pod %s: restartCount %d -> %d; want exactly one recreation", name, was, got)
		}
	}
	report := stream.Stop()
	sent, failed := report.Total()
	t.Logf("clients: %d sent, %d failed", sent, failed)
	if failed > 0 {
		t.Errorf("%d of %d client requests failed: %s", failed, sent, strings.Join(report.Failures(), "; "))
	}
}
