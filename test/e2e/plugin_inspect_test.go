package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// testPolicyYAML is a dry-run policy whose inline rule matches pods
// annotated rejuv.test/recreate=yes, letting every match through.
const testPolicyYAML = `apiVersion: rejuv.dev/v1alpha1
kind: RecreatePolicy
metadata:
  name: asked
spec:
  selector:
    matchLabels: {app: web}
  dryRun: true
  evaluationInterval: 2s
  rollout: {maxUnavailable: 100%}
  limits: {maxMatchingPercent: 100}
  rules:
  - name: asked
    rego: |
      package asked
      import rego.v1
      recreate contains {"container": c.name, "reason": "asked by annotation"} if {
        input.pod.metadata.annotations["rejuv.test/recreate"] == "yes"
        some c in input.containers
      }
`

// TestPluginPolicyTestAgreesWithTheRunningPolicy: kubectl rejuv policy
// test -f, run against the live pods before the policy exists, decides
// for each pod what the policy then decides once applied: DryRun for the
// two annotated pods the kubelet restarts, Skipped for the annotated one
// it would not (restartPolicy Never), nothing for the others. It creates
// nothing, and an --expect file of those results passes.
func TestPluginPolicyTestAgreesWithTheRunningPolicy(t *testing.T) {
	t.Parallel()
	c := rejuvStack(t).Client
	ctx := context.Background()
	ns := newNamespace(t)
	asEditor(t, ns)
	pods := testappDeployment(t, c, ns, "web", 4)
	annotated := 0
	for _, pod := range pods {
		if annotated < 2 {
			annotatePod(t, c, pod)
			annotated++
		}
	}
	never := testappPod("once")
	never.Labels = map[string]string{"app": "web"}
	never.Annotations = map[string]string{"rejuv.test/recreate": "yes"}
	never.Spec.RestartPolicy = corev1.RestartPolicyNever
	createPod(t, ns, never)
	dir := t.TempDir()
	file := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(file, []byte(testPolicyYAML), 0o644); err != nil {
		t.Fatal(err)
	}

	run := kubectlRejuv(t, ns, "policy", "test", "-f", file, "-o", "json")
	if run.code != 0 {
		t.Fatalf("policy test exited %d", run.code)
	}
	var report struct {
		Policies []struct {
			Selected int `json:"selected"`
			Pods     []struct {
				Pod     string `json:"pod"`
				Outcome string `json:"outcome"`
				Reason  string `json:"reason"`
			} `json:"pods"`
		} `json:"policies"`
	}
	if err := json.Unmarshal([]byte(run.stdout), &report); err != nil {
		t.Fatalf("policy test -o json: %v", err)
	}
	if len(report.Policies) != 1 || report.Policies[0].Selected != 5 {
		t.Fatalf("policy test saw %+v, want one policy selecting 5 pods", report.Policies)
	}
	previewed := map[string]string{}
	var expect strings.Builder
	expect.WriteString("results:\n")
	for _, p := range report.Policies[0].Pods {
		previewed[p.Pod] = p.Outcome
		expect.WriteString("- {policy: asked, pod: " + p.Pod + ", outcome: " + p.Outcome + "}\n")
	}
	counts := map[string]int{}
	for _, o := range previewed {
		counts[o]++
	}
	if counts["DryRun"] != 2 || counts["Skipped"] != 1 || counts["None"] != 2 || previewed["once"] != "Skipped" {
		t.Fatalf("previewed %v, want DryRun for the two annotated pods, Skipped for once, None for the others", previewed)
	}

	// Apply the same policy and read its decisions.
	p := &v1alpha1.RecreatePolicy{}
	if err := yaml.UnmarshalStrict([]byte(testPolicyYAML), p); err != nil {
		t.Fatal(err)
	}
	p.Namespace = ns
	if err := c.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	decided := map[string]string{}
	waitFor(t, "the running policy's decisions on the three annotated pods", func() bool {
		for _, d := range readPolicy(t, c, ns, "asked").Status.RecentDecisions {
			decided[d.Pod] = string(d.Outcome)
		}
		return len(decided) == 3
	})
	for pod, outcome := range previewed {
		want := outcome
		if outcome == "None" {
			want = ""
		}
		if decided[pod] != want {
			t.Errorf("pod %s: policy test said %s, the running policy %q", pod, outcome, decided[pod])
		}
	}

	expectFile := filepath.Join(dir, "expect.yaml")
	if err := os.WriteFile(expectFile, []byte(expect.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if run := kubectlRejuv(t, ns, "policy", "test", "-f", file, "--expect", expectFile); run.code != 0 || !strings.Contains(run.stdout, "5 of 5 passed") {
		t.Errorf("policy test --expect of the same results: exit %d", run.code)
	}
	if run := kubectlRejuv(t, ns, "policy", "test", "-f", file, "--input", "once"); run.code != 0 || !strings.Contains(run.stdout, `"rejuv.test/recreate": "yes"`) {
		t.Errorf("policy test --input once: exit %d, no annotation in the input document", run.code)
	}
	if n := len(policyRequests(t, c, ns, "asked")); n != 0 {
		t.Errorf("%d requests from a dry-run policy", n)
	}
}

// TestPluginStatusExplainRules: after a restart with kubectl rejuv,
// status shows the request by pod, source and reason, and the policy that
// selects the pod; status crr/NAME and rp/NAME show one of them; explain
// says which policy selects the pod and which does not, and why; rules
// lists the library; completion writes a script; restart rp/NAME runs a
// policy's rolling restart now.
func TestPluginStatusExplainRules(t *testing.T) {
	t.Parallel()
	c := rejuvStack(t).Client
	ctx := context.Background()
	ns := newNamespace(t)
	asEditor(t, ns)
	pod := testappPod("web")
	pod.Labels = map[string]string{"app": "web"}
	createPod(t, ns, pod)
	for _, p := range []*v1alpha1.RecreatePolicy{
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nightly"}, Spec: v1alpha1.RecreatePolicySpec{
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, Schedule: &v1alpha1.Schedule{Cron: "0 3 1 1 *"}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api"}, Spec: v1alpha1.RecreatePolicySpec{
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}}, Schedule: &v1alpha1.Schedule{Cron: "0 3 1 1 *"}}},
	} {
		if err := c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if run := kubectlRejuv(t, ns, "restart", "web", "--wait", "--reason", "checking status"); run.code != 0 {
		t.Fatalf("restart exited %d", run.code)
	}
	status := kubectlRejuv(t, ns, "status")
	for _, want := range []string{"Requests (0 in flight):", "web-", "app=Succeeded", "kubectl", "Succeeded", "checking status", "nightly", "api"} {
		if !strings.Contains(status.stdout, want) {
			t.Errorf("status lacks %q", want)
		}
	}
	var report struct {
		Requests []struct {
			Name   string `json:"name"`
			Pod    string `json:"pod"`
			Source string `json:"source"`
			Result string `json:"result"`
		} `json:"requests"`
		Policies []struct {
			Name string `json:"name"`
		} `json:"policies"`
	}
	byPod := kubectlRejuv(t, ns, "status", "web", "-o", "json")
	if err := json.Unmarshal([]byte(byPod.stdout), &report); err != nil {
		t.Fatalf("status web -o json: %v", err)
	}
	if len(report.Requests) != 1 || report.Requests[0].Pod != "web" || report.Requests[0].Source != "kubectl" || report.Requests[0].Result != "Succeeded" ||
		len(report.Policies) != 1 || report.Policies[0].Name != "nightly" {
		t.Fatalf("status web: %+v", report)
	}
	crr := report.Requests[0].Name
	if run := kubectlRejuv(t, ns, "status", "crr/"+crr, "-o", "wide"); run.code != 0 || !strings.Contains(run.stdout, crr) || strings.Contains(run.stdout, "\napi ") {
		t.Errorf("status crr/%s: exit %d", crr, run.code)
	}
	if run := kubectlRejuv(t, ns, "status", "rp/nightly", "-o", "yaml"); run.code != 0 || !strings.Contains(run.stdout, "name: nightly") || strings.Contains(run.stdout, "name: api") {
		t.Errorf("status rp/nightly: exit %d", run.code)
	}

	explain := kubectlRejuv(t, ns, "explain", "web")
	for _, want := range []string{
		"Pod " + ns + "/web on node ",
		crr,
		"RecreatePolicy api does not select this pod: its selector requires app=api; the pod's app is web.",
		"RecreatePolicy nightly selects this pod (ready True).",
		"may recreate: app",
		"schedule: 0 3 1 1 * (UTC), next run in ",
		"a run starting now: Created: scheduled run of ",
	} {
		if !strings.Contains(explain.stdout, want) {
			t.Errorf("explain lacks %q", want)
		}
	}
	if run := kubectlRejuv(t, ns, "explain", "nope"); run.code != 1 || !strings.Contains(run.stderr, "no pod nope in namespace "+ns) {
		t.Errorf("explain of a pod that does not exist: exit %d", run.code)
	}
	rules := kubectlRejuv(t, ns, "rules")
	for _, want := range []string{"max-age", "memory-leak", "memory-near-limit", "restart-storm", "stuck-readiness", "stuck-startup", "notReadyFor  duration  10m"} {
		if !strings.Contains(rules.stdout, want) {
			t.Errorf("rules lacks %q", want)
		}
	}
	if run := kubectlRejuv(t, ns, "completion", "bash"); run.code != 0 || !strings.Contains(run.stdout, "__start_kubectl-rejuv") {
		t.Errorf("completion bash: exit %d", run.code)
	}
	if run := kubectlRejuv(t, ns, "__complete", "restart", "we"); run.code != 0 || !strings.Contains(run.stdout, "web\n") {
		t.Errorf("completing restart we: exit %d", run.code)
	}

	// An existing policy's rolling restart, now: its own selector and
	// containers, followed to the end.
	run := kubectlRejuv(t, ns, "restart", "rp/nightly", "--wait", "--timeout", "2m")
	if run.code != 0 || !strings.Contains(run.stdout, "recreatepolicy.rejuv.dev/nightly restarted") || !strings.Contains(run.stdout, "done: 1 of 1 pods recreated") {
		t.Errorf("restart rp/nightly: exit %d", run.code)
	}
	if run := kubectlRejuv(t, ns, "restart", "rp/nightly", "-c", "app"); run.code != 2 || !strings.Contains(run.stderr, "restarts the containers its spec names") {
		t.Errorf("restart rp/nightly -c app: exit %d, want a usage error", run.code)
	}
}

// TestPluginInterruptLeavesTheRestartGoing: Ctrl-C while a deployment's
// restart is followed says what is in flight and how to follow or stop it,
// exits non-zero, and the restart goes on in the cluster to its end, as
// it would with the laptop closed.
func TestPluginInterruptLeavesTheRestartGoing(t *testing.T) {
	t.Parallel()
	c := rejuvStack(t).Client
	ns := newNamespace(t)
	asEditor(t, ns)
	before := testappDeploymentWith(t, c, ns, "slow", 3, func(pod *corev1.PodSpec) {
		pod.Containers[0].Args = []string{"--startup-delay=6s"}
	})
	cmd := exec.CommandContext(t.Context(), pluginBinary(t), "--kubeconfig", cluster.Kubeconfig(), "--cache-dir", t.TempDir(), "-n", ns, "--as", editorUser,
		"restart", "deployment/slow", "--max-unavailable", "1", "--wait")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		if strings.Contains(lines.Text(), ": recreating app (containerrecreaterequest ") {
			break
		}
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	for lines.Scan() {
	}
	err = cmd.Wait()
	t.Logf("stderr after the interrupt:\n%s", stderr.String())
	if exit, ok := errors.AsType[*exec.ExitError](err); !ok || exit.ExitCode() != 1 {
		t.Errorf("interrupted: %v, want exit 1", err)
	}
	for _, want := range []string{"interrupted: 0 of 3 pods recreated; in flight: pod slow-", "(containerrecreaterequest restart-deployment-slow-",
		"the restart goes on in the cluster; follow it: kubectl rejuv status rp/restart-deployment-slow -n " + ns} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	run := finishRun(t, c, ns, "restart-deployment-slow")
	if run.State != v1alpha1.RunCompleted || run.Recreated != 3 {
		t.Fatalf("after the interrupt the restart ended %+v, want Completed with 3 pods", run)
	}
	recreatedOncePerPod(t, c, ns, "restart-deployment-slow", "app=slow", before, run)
}
