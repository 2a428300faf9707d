package recreatepolicy

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/pause"
)

// pauseRejuv creates the emergency stop's ConfigMap in a namespace of its
// own (the manager's) and gives c the switch that reads it; the returned
// function deletes it: Rejuv resumes.
func pauseRejuv(t *testing.T, c *testReconciler, reason string) (resume func()) {
	t.Helper()
	c.Pause = &pause.Switch{Reader: admin, Namespace: newNamespace(t)}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.Pause.Namespace, Name: v1alpha1.PauseConfigMap},
		Data:       map[string]string{v1alpha1.PauseReasonKey: reason},
	}
	if err := admin.Create(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	return func() {
		t.Helper()
		if err := admin.Delete(context.Background(), cm); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAPauseHoldsARunAndResumeFinishesIt: a rolling run has recreated
// one pod of three, and made its request for the second, when Rejuv is
// paused: the request controller withdraws that request, not begun;
// passes while paused create no request, each decision and the Ready
// condition say why; a run due meanwhile is not started. Once resumed the
// run goes on, neither halted by the withdrawn request nor taking it for
// the pod's: it recreates each of the other two pods once, the second
// under a new name.
func TestAPauseHoldsARunAndResumeFinishesIt(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	createPods(t, ns, "web", 3, c.clock.Now().Add(-time.Hour))
	at := c.clock.Now().Add(-time.Second).Truncate(time.Second)
	p := createPolicy(t, ns, "roll", v1alpha1.RecreatePolicySpec{
		Selector:  metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		RestartAt: &metav1.Time{Time: at},
		Rollout:   v1alpha1.Rollout{MaxUnavailable: new(intstr.FromInt32(1))},
	})
	c.reconcile(t, p)
	first := requestsOf(t, p)
	if len(first) != 1 {
		t.Fatalf("premise: the run's first pass made %d requests, want 1 (maxUnavailable 1)", len(first))
	}
	c.clock.Step(20 * time.Second)
	complete(t, c, &first[0], true)
	c.reconcile(t, p)
	second := requestsOf(t, p)
	if len(second) != 2 {
		t.Fatalf("premise: %d requests after the first completed, want 2", len(second))
	}

	resume := pauseRejuv(t, c, "INC-42: a bad image")
	for i := range second {
		if second[i].Status.Phase == "" {
			withdraw(t, &second[i], c.Pause)
		}
	}
	for range 3 {
		c.reconcile(t, p)
		c.clock.Step(20 * time.Second)
	}
	if n := len(requestsOf(t, p)); n != 2 {
		t.Fatalf("%d requests after three passes while paused, want still 2", n)
	}
	got := getPolicy(t, p)
	ready := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionReady)
	if ready == nil || ready.Status != metav1.ConditionFalse || ready.Reason != v1alpha1.ReasonPaused || !strings.Contains(ready.Message, `"INC-42: a bad image"`) {
		t.Errorf("Ready condition %+v, want False, reason Paused, quoting the reason", ready)
	}
	if !decided(t, p, v1alpha1.OutcomePaused) {
		t.Errorf("no Paused decision: %+v", got.Status.RecentDecisions)
	}
	if got.Status.Run == nil || got.Status.Run.State != v1alpha1.RunRunning {
		t.Errorf("run %+v while paused, want still Running", got.Status.Run)
	}

	// A restart asked for while paused is not started.
	later := getPolicy(t, p)
	later.Spec.RestartAt = &metav1.Time{Time: c.clock.Now().Add(-time.Second).Truncate(time.Second)}
	if err := admin.Update(context.Background(), later); err != nil {
		t.Fatal(err)
	}
	c.reconcile(t, p)
	if n := len(requestsOf(t, p)); n != 2 {
		t.Fatalf("%d requests after a restart asked for while paused, want still 2", n)
	}

	resume()
	rolled := roll(t, c, p)
	if rolled.requests != 4 || rolled.maxInFlight != 1 {
		t.Fatalf("after resuming: %d requests, at most %d in flight; want 4 in all (each pod once, and the one withdrawn), one at a time", rolled.requests, rolled.maxInFlight)
	}
	recreated := map[string]int{}
	for _, crr := range requestsOf(t, p) {
		if crr.Status.Result == appsv1beta1.ResultSucceeded {
			recreated[crr.Spec.PodName]++
		}
	}
	if len(recreated) != 3 {
		t.Errorf("pods recreated: %v, want all three", recreated)
	}
	for pod, n := range recreated {
		if n != 1 {
			t.Errorf("pod %s recreated %d times, want once", pod, n)
		}
	}
	if run := getPolicy(t, p).Status.Run; run == nil || run.State != v1alpha1.RunCompleted || run.Recreated != 3 {
		t.Errorf("run %+v, want Completed with 3 pods recreated", run)
	}
	if ready := meta.FindStatusCondition(getPolicy(t, p).Status.Conditions, v1alpha1.ConditionReady); ready == nil || ready.Reason == v1alpha1.ReasonPaused {
		t.Errorf("Ready condition %+v after resuming, want it no longer Paused", ready)
	}
}

// withdraw ends crr as the request controller does for a pause, before a
// daemon began it.
func withdraw(t *testing.T, crr *appsv1beta1.ContainerRecreateRequest, stop *pause.Switch) {
	t.Helper()
	st, err := stop.Read(context.Background())
	if err != nil || !st.Paused {
		t.Fatalf("premise: the stop reads %+v, %v; want paused", st, err)
	}
	crr.Status.Phase = appsv1beta1.PhaseCompleted
	crr.Status.Result = appsv1beta1.ResultFailed
	crr.Status.Message = st.Cause
	crr.Status.ContainerRecreateStates = []appsv1beta1.ContainerRecreateRequestContainerRecreateState{{Name: "app", Phase: appsv1beta1.PhaseFailed, Message: "not recreated: " + st.Cause}}
	if err := admin.Status().Update(context.Background(), crr); err != nil {
		t.Fatal(err)
	}
}
