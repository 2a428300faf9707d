package crr

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	rejuvv1alpha1 "github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// TestARunKeepsItsRequestsUntilItEnds: a policy's run counts the pods it
// recreated from its requests. A request of a run still Running is kept
// past its TTL of 0, so that the run counts its pod as recreated rather
// than started again by something else; once the run has completed, the
// request goes.
func TestARunKeepsItsRequestsUntilItEnds(t *testing.T) {
	needsAPIServer(t)
	t.Parallel()
	ctx := context.Background()
	pod := createPod(t, newNamespace(t), readyNode(t), false)
	at := metav1.NewTime(time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC))
	p := &rejuvv1alpha1.RecreatePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: "nightly"},
		Spec: rejuvv1alpha1.RecreatePolicySpec{
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Schedule: &rejuvv1alpha1.Schedule{Cron: "0 3 * * *"},
		},
	}
	if err := admin.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	p.Status.Run = &rejuvv1alpha1.Run{ScheduledTime: at, State: rejuvv1alpha1.RunRunning, Pods: 2}
	if err := admin.Status().Update(ctx, p); err != nil {
		t.Fatal(err)
	}
	crr := createCRR(t, pod, "nightly-web", func(s *v1beta1.ContainerRecreateRequestSpec) { s.TTLSecondsAfterFinished = ptr.To[int32](0) }, nil)
	// As the policy makes it: its run's time, and the policy controlling it.
	patch := client.MergeFrom(crr.DeepCopy())
	crr.Annotations[v1beta1.RunAnnotation] = at.UTC().Format(time.RFC3339)
	crr.OwnerReferences = []metav1.OwnerReference{{APIVersion: rejuvv1alpha1.GroupVersion.String(), Kind: "RecreatePolicy",
		Name: p.Name, UID: p.UID, Controller: new(true)}}
	if err := admin.Patch(ctx, crr, patch); err != nil {
		t.Fatal(err)
	}
	done := metav1.Now()
	writeStatus(t, crr, func(s *v1beta1.ContainerRecreateRequestStatus) {
		s.Phase, s.CompletionTime = v1beta1.PhaseCompleted, &done
		s.ContainerRecreateStates = []v1beta1.ContainerRecreateRequestContainerRecreateState{{Name: "app", Phase: v1beta1.PhaseSucceeded}, {Name: "sidecar", Phase: v1beta1.PhaseSucceeded}}
	})
	// The premise: the controller has finished with it (its active label
	// is gone), and would have deleted it at once for its TTL of 0.
	kept := func(what string) *v1beta1.ContainerRecreateRequest {
		t.Helper()
		cur := &v1beta1.ContainerRecreateRequest{}
		if err := admin.Get(ctx, client.ObjectKeyFromObject(crr), cur); err != nil {
			t.Fatalf("the request of run %s, still Running, %s past its TTL of 0: %v; want it kept", at.UTC().Format(time.RFC3339), what, err)
		}
		return cur
	}
	for end := time.Now().Add(10 * time.Second); !retired(kept("once completed")); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("premise: the request was not retired within 10s of its completion")
		}
	}
	time.Sleep(3 * time.Second)
	kept("3s after it was retired")

	p.Status.Run.State, p.Status.Run.CompletionTime = rejuvv1alpha1.RunCompleted, &done
	if err := admin.Status().Update(ctx, p); err != nil {
		t.Fatal(err)
	}
	ended := time.Now()
	deadline := ended.Add(runKeepRecheck + 5*time.Second)
	for {
		err := admin.Get(ctx, client.ObjectKeyFromObject(crr), &v1beta1.ContainerRecreateRequest{})
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the request of a completed run is still there %s after the run completed (%v); want it deleted within %s", time.Since(ended).Round(time.Second), err, runKeepRecheck)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
