package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// TestContainerWithItsOwnRestartPolicyNever: with container restart rules
// (on by default since Kubernetes 1.35), container app of a pod whose
// restartPolicy is Always has its own restartPolicy Never, so the kubelet
// would not start it again once stopped. A request for app is refused at
// admission, naming the pod's field; a request for the other container,
// side, recreates side and leaves app alone. kubectl rejuv refuses app
// and, named none, takes only side, saying it leaves app alone. A policy
// whose rule matches both containers skips app with the message, and a
// rolling restart of the pod recreates side and skips app, which its
// follower shows. app runs as the same container throughout.
func TestContainerWithItsOwnRestartPolicyNever(t *testing.T) {
	t.Parallel()
	c := rejuvStack(t).Client
	ctx := context.Background()
	ns := newNamespace(t)
	asEditor(t, ns)
	pod := twoContainerPod("web")
	pod.Labels = map[string]string{"app": "web"}
	pod.Spec.RestartPolicy = corev1.RestartPolicyAlways
	pod.Spec.Containers[0].RestartPolicy = ptr.To(corev1.ContainerRestartPolicyNever)
	before := createPod(t, ns, pod)
	// The premise: the API server kept the container's own restartPolicy.
	if p := before.Spec.Containers[0].RestartPolicy; p == nil || *p != corev1.ContainerRestartPolicyNever || before.Spec.Containers[0].Name != "app" {
		t.Fatalf("pod web's container %s has restartPolicy %v; the API server dropped it (container restart rules off?)", before.Spec.Containers[0].Name, p)
	}
	const why = "spec.containers[0].restartPolicy is Never: the kubelet would not start container app again once stopped"

	// Admission.
	err := c.Create(ctx, newRequest(ns, "app", "web", "app"))
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.containers[0].name") || !strings.Contains(err.Error(), "pod web: "+why) {
		t.Errorf("a request for app: %v; want Invalid on spec.containers[0].name saying %q", err, "pod web: "+why)
	}
	side := newRequest(ns, "side", "web", "side")
	side.Spec.Strategy = &v1beta1.ContainerRecreateRequestStrategy{MinStartedSeconds: 1}
	if err := c.Create(ctx, side); err != nil {
		t.Fatalf("create a request for side: %v", err)
	}
	if done, _ := waitCompleted(t, c, side, time.Minute); done.Status.Result != v1beta1.ResultSucceeded {
		t.Fatalf("the request for side ended %s: %s; states %+v", done.Status.Result, done.Status.Message, done.Status.ContainerRecreateStates)
	}
	after := waitPod(t, ns, "web", "Ready again", podReady(true))
	if s, was := containerStatus(after, "side"), containerStatus(before, "side"); s.RestartCount != was.RestartCount+1 || s.ContainerID == was.ContainerID {
		t.Errorf("side: restartCount %d -> %d, ID %s -> %s; want one recreation", was.RestartCount, s.RestartCount, was.ContainerID, s.ContainerID)
	}

	// The plugin.
	for _, args := range [][]string{{"restart", "web", "-c", "app"}, {"create", "crr", "by-hand", "--pod", "web", "--containers", "app"}} {
		if run := kubectlRejuv(t, ns, args...); run.code != 1 || !strings.Contains(run.stderr, "pod "+ns+"/web: "+why) {
			t.Errorf("kubectl rejuv %s: exit %d; want 1 and %q", strings.Join(args, " "), run.code, why)
		}
	}
	run := kubectlRejuv(t, ns, "restart", "web", "--dry-run=server", "-o", "jsonpath={.spec.containers[*].name}")
	if run.code != 0 || run.stdout != "side" || !strings.Contains(run.stderr, "pod "+ns+"/web: left alone: "+why) {
		t.Errorf("kubectl rejuv restart web: exit %d, containers %q; want side, and app left alone", run.code, run.stdout)
	}

	// A policy's rule that matches every container of the pod (in dry
	// run): side is a candidate, app is skipped.
	annotatePod(t, c, before)
	createPolicy(t, annotationPolicy(ns, "asked", "web", func(s *v1alpha1.RecreatePolicySpec) { s.DryRun = true }))
	waitDecision(t, c, ns, "asked", func(d v1alpha1.Decision) bool {
		return d.Pod == "web" && d.Outcome == v1alpha1.OutcomeSkipped && slices.Equal(d.Containers, []string{"app"}) &&
			d.Message == why && strings.Contains(d.Reason, "asked by annotation")
	})
	waitDecision(t, c, ns, "asked", func(d v1alpha1.Decision) bool {
		return d.Pod == "web" && d.Outcome == v1alpha1.OutcomeDryRun && slices.Equal(d.Containers, []string{"side"})
	})

	// A rolling restart of the pod's label: side recreated, app skipped.
	run = kubectlRejuv(t, ns, "restart", "-l", "app=web", "--wait")
	if run.code != 0 || !strings.Contains(run.stdout, "pod web: app left alone: "+why) || !strings.Contains(run.stdout, "done: 1 of 1 pods recreated") {
		t.Errorf("kubectl rejuv restart -l app=web --wait: exit %d; want 0, app skipped and the pod recreated", run.code)
	}
	final := waitPod(t, ns, "web", "Ready again", podReady(true))
	if s, was := containerStatus(final, "side"), containerStatus(after, "side"); s.RestartCount != was.RestartCount+1 {
		t.Errorf("side: restartCount %d -> %d over the rolling restart; want one recreation", was.RestartCount, s.RestartCount)
	}
	if a, was := containerStatus(final, "app"), containerStatus(before, "app"); a.RestartCount != was.RestartCount || a.ContainerID != was.ContainerID || a.State.Running == nil {
		t.Errorf("app: restartCount %d -> %d, ID %s -> %s, state %+v; want the same container running throughout", was.RestartCount, a.RestartCount, was.ContainerID, a.ContainerID, a.State)
	}
}
