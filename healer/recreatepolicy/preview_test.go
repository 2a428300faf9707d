package recreatepolicy

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// TestPreviewAgreesWithAPass: a preview over the namespace's objects
// decides what the controller's next pass then decides, pod by pod: two
// annotated pods match, maxUnavailable 1 lets one through and holds the
// other; the preview shows every gate's view of the held one, and
// creates nothing.
func TestPreviewAgreesWithAPass(t *testing.T) {
	needsAPIServer(t)
	ctx := context.Background()
	ns := newNamespace(t)
	c := newController(t, 0)
	pods := createPods(t, ns, "web", 4, c.clock.Now().Add(-time.Hour))
	annotate(t, pods[1])
	annotate(t, pods[2])
	spec := rulePolicy("web", annotated)
	spec.Rollout.MaxUnavailable = new(intstr.FromInt32(1))
	spec.Limits.MaxMatchingPercent = new(int32(60))
	p := createPolicy(t, ns, "custom", spec)

	podList := &corev1.PodList{}
	if err := admin.List(ctx, podList, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	preview, err := PreviewPolicy(ctx, getPolicy(t, p), PreviewInput{Pods: podList.Items, Now: c.clock.Now(), NoMemory: "none here"})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(requestsOf(t, p)); n != 0 {
		t.Fatalf("the preview created %d requests", n)
	}
	previewed := map[string]v1alpha1.DecisionOutcome{}
	for _, pp := range preview.Pods {
		if pp.Decided != nil {
			previewed[pp.Pod.Name] = pp.Decided.Decision.Outcome
			if pp.Decided.Decision.Outcome == v1alpha1.OutcomeUnavailable {
				held := false
				for _, g := range pp.Decided.Gates {
					held = held || g.Gate == v1alpha1.OutcomeUnavailable && strings.Contains(g.Message, "rollout.maxUnavailable allows 1")
				}
				if !held {
					t.Errorf("pod %s: gates %+v do not show maxUnavailable holding it", pp.Pod.Name, pp.Decided.Gates)
				}
			}
		}
	}
	if preview.Selected != 4 || len(preview.Pods) != 4 || len(previewed) != 2 {
		t.Fatalf("preview: %d selected, %d evaluated, decisions %v; want 4, 4 and two", preview.Selected, len(preview.Pods), previewed)
	}

	c.reconcile(t, p)
	passed := map[string]v1alpha1.DecisionOutcome{}
	for _, d := range getPolicy(t, p).Status.RecentDecisions {
		passed[d.Pod] = d.Outcome
	}
	for pod, outcome := range previewed {
		if passed[pod] != outcome {
			t.Errorf("pod %s: preview %s, pass %s", pod, outcome, passed[pod])
		}
	}
	if len(passed) != len(previewed) {
		t.Errorf("pass decided %v, preview %v", passed, previewed)
	}

	// With the request in flight, a second preview holds both pods: the
	// one recreating by InFlight.
	crrs := &appsv1beta1.ContainerRecreateRequestList{}
	if err := admin.List(ctx, crrs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	again, err := PreviewPolicy(ctx, getPolicy(t, p), PreviewInput{Pods: podList.Items, Requests: crrs.Items, Now: c.clock.Now()})
	if err != nil {
		t.Fatal(err)
	}
	for _, pp := range again.Pods {
		if pp.Decided != nil && pp.Decided.Decision.Outcome == v1alpha1.OutcomeCreated {
			t.Errorf("pod %s would be recreated again with its request in flight", pp.Pod.Name)
		}
	}
}

// TestAPreviewWhileRejuvIsPausedSaysSo: kubectl rejuv explain passes on
// the pause the policy's status reports; its preview holds every
// candidate with the gate Paused, quoting why.
func TestAPreviewWhileRejuvIsPausedSaysSo(t *testing.T) {
	needsAPIServer(t)
	ctx := context.Background()
	ns := newNamespace(t)
	c := newController(t, 0)
	pods := createPods(t, ns, "web", 2, c.clock.Now().Add(-time.Hour))
	annotate(t, pods[0])
	p := createPolicy(t, ns, "custom", rulePolicy("web", annotated))
	podList := &corev1.PodList{}
	if err := admin.List(ctx, podList, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	preview, err := PreviewPolicy(ctx, getPolicy(t, p), PreviewInput{Pods: podList.Items, Now: c.clock.Now(), Paused: "Rejuv is paused cluster-wide: INC-1"})
	if err != nil {
		t.Fatal(err)
	}
	held := 0
	for _, pp := range preview.Pods {
		if d := pp.Decided; d != nil {
			if d.Decision.Outcome != v1alpha1.OutcomePaused || !strings.Contains(d.Decision.Message, "INC-1") {
				t.Errorf("pod %s: %s %q, want Paused quoting why", pp.Pod.Name, d.Decision.Outcome, d.Decision.Message)
			}
			held++
		}
	}
	if held != 1 {
		t.Errorf("%d candidates held, want the annotated pod's", held)
	}
}
