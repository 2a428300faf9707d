package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// stubbornRequest starts a request on a container that ignores SIGTERM with
// a 4 s grace period, so that the daemon's stop takes 4 s, and returns it
// with the container's status before, once the node's daemon has logged
// that it is stopping the container (and not yet that it stopped it), and
// that daemon pod.
func stubbornRequest(t *testing.T, name, node string, grace int64) (*v1beta1.ContainerRecreateRequest, *corev1.Pod, corev1.ContainerStatus, *corev1.Pod) {
	t.Helper()
	s := rejuvStack(t)
	ctx := context.Background()
	ns := newNamespace(t)
	spec := testappPod(name)
	spec.Spec.Containers[0].Args = []string{"--ignore-sigterm"}
	pod := createPod(t, ns, onNode(spec, node))
	before := containerStatus(pod, "app")
	daemon, err := s.DaemonPod(ctx, pod.Spec.NodeName)
	if err != nil {
		t.Fatal(err)
	}
	crr := newRequest(ns, name, pod.Name, "app")
	crr.Spec.Strategy = &v1beta1.ContainerRecreateRequestStrategy{TerminationGracePeriodSeconds: new(grace)}
	if err := s.Client.Create(ctx, crr); err != nil {
		t.Fatal(err)
	}
	key := ns + "/" + name
	deadline := time.Now().Add(10 * time.Second)
	for {
		lines := requestLog(podLog(t, daemon.Name, false), key)
		stopping, stopped := strings.Contains(lines, `"msg":"stopping container"`), strings.Contains(lines, `"msg":"stopped container"`)
		if stopping && !stopped {
			break
		}
		if stopped || time.Now().After(deadline) {
			t.Fatalf("the daemon did not log the stop of %s as under way (stopped already: %t):\n%s", key, stopped, lines)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return crr, pod, before, daemon
}

// requestLog keeps the log lines about one request.
func requestLog(log, key string) string {
	var out []string
	for line := range strings.SplitSeq(log, "\n") {
		if strings.Contains(line, `"ContainerRecreateRequest":"`+key+`"`) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// recreatedOnce checks that the request succeeded and the container was
// restarted exactly once.
func recreatedOnce(t *testing.T, crr *v1beta1.ContainerRecreateRequest, pod *corev1.Pod, before corev1.ContainerStatus) {
	t.Helper()
	got, _ := waitCompleted(t, rejuvStack(t).Client, crr, 90*time.Second)
	if got.Status.Result != v1beta1.ResultSucceeded {
		t.Fatalf("result %q: %s %+v", got.Status.Result, got.Status.Message, got.Status.ContainerRecreateStates)
	}
	after := waitPod(t, pod.Namespace, pod.Name, "Ready with a new container", func(p *corev1.Pod) bool {
		return podReady(true)(p) && containerStatus(p, "app").ContainerID != before.ContainerID
	})
	now := containerStatus(after, "app")
	if now.RestartCount != before.RestartCount+1 {
		t.Errorf("restartCount %d -> %d: want exactly one restart", before.RestartCount, now.RestartCount)
	}
}

// killDaemon deletes the daemon pod at once and waits until the
// DaemonSet's next pod is ready.
func killDaemon(t *testing.T, daemon *corev1.Pod) {
	t.Helper()
	s := rejuvStack(t)
	ctx := context.Background()
	if err := s.Kill(ctx, daemon.Name); err != nil {
		t.Fatal(err)
	}
	// Right after the kill the DaemonSet's status may still count the
	// killed pod ready, and WaitReady pass before the next pod exists.
	waitFor(t, "the daemon pod "+daemon.Name+" replaced", func() bool {
		next, err := s.DaemonPod(ctx, daemon.Spec.NodeName)
		return err == nil && next.UID != daemon.UID
	})
	if err := s.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestDaemonPodKilledDuringAStopResumesWithoutStoppingTwice deletes the
// daemon's pod at once while it stops a container that ignores SIGTERM:
// the DaemonSet's next pod resumes the request from its status, which ends
// Succeeded with the container restarted exactly once. Not parallel: the
// other tests' requests need the daemon.
func TestDaemonPodKilledDuringAStopResumesWithoutStoppingTwice(t *testing.T) {
	disturbs(t)
	crr, pod, before, daemon := stubbornRequest(t, "killed-daemon", "", 4)
	killDaemon(t, daemon)
	recreatedOnce(t, crr, pod, before)
}

// TestDaemonPodKilledDuringAPreStopDoesNotRunItTwice deletes the daemon's
// pod at once while a container's exec preStop hook runs (it appends a
// line to a file, then sleeps): the DaemonSet's next pod reads the hook's
// start from the request's status and stops the container without running
// the hook again. The file holds one line; the container restarted once.
// Not parallel: the other tests' requests need the daemon.
func TestDaemonPodKilledDuringAPreStopDoesNotRunItTwice(t *testing.T) {
	disturbs(t)
	s := rejuvStack(t)
	ctx := context.Background()
	ns := newNamespace(t)
	spec := controlledPod("hooked")
	spec.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{
		Exec: &corev1.ExecAction{Command: []string{"sh", "-c", "echo ran >> /ctl/prestop; sleep 6"}}}}
	pod := createPod(t, ns, spec)
	before := containerStatus(pod, "app")
	daemon, err := s.DaemonPod(ctx, pod.Spec.NodeName)
	if err != nil {
		t.Fatal(err)
	}
	crr := newRequest(ns, "hook-cut-short", pod.Name, "app")
	crr.Spec.Strategy = &v1beta1.ContainerRecreateRequestStrategy{TerminationGracePeriodSeconds: new(int64(15))}
	if err := s.Client.Create(ctx, crr); err != nil {
		t.Fatal(err)
	}
	// The premise: the hook has started (recorded, and its line written)
	// and the container is not stopped yet.
	waitFor(t, "the hook under way", func() bool {
		cur := &v1beta1.ContainerRecreateRequest{}
		if s.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: crr.Name}, cur) != nil {
			return false
		}
		states := cur.Status.ContainerRecreateStates
		return len(states) == 1 && states[0].PreStopStartedAt != nil && !states[0].IsKilled &&
			strings.TrimSpace(execIn(t, ns, pod.Name, "side", "sh", "-c", "cat /ctl/prestop 2>/dev/null; true")) == "ran"
	})
	killDaemon(t, daemon)
	recreatedOnce(t, crr, pod, before)
	if lines := strings.Fields(execIn(t, ns, pod.Name, "side", "cat", "/ctl/prestop")); len(lines) != 1 {
		t.Errorf("the preStop hook ran %d times (%q), want once", len(lines), lines)
	}
}
