package planner

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
	"github.com/rejuv-dev/rejuv/policy/policytest"
)

// TestARunsRequestQueuedBehindAnotherDoesNotCountAsRecreated: a request of
// the run made for a pod while another request of the pod (by hand, unseen
// in the manager's lagging cache) was queued ahead of it succeeds on that
// one's new instance without stopping anything: the pod was started again
// by something else, up to date, not recreated by the run (found by the
// soak, seed 13: a restartAt run reported 3 of 4 recreated where its own
// requests had restarted 2, the third pod restarted by by-hand-10).
func TestARunsRequestQueuedBehindAnotherDoesNotCountAsRecreated(t *testing.T) {
	at := time.Date(2026, 11, 30, 19, 2, 10, 0, time.UTC)
	run := Trigger{Kind: TriggerSchedule, Run: at, Requested: true}
	before := []*corev1.Pod{
		policytest.RunningPod("a", 4, "aaaaaaaaaaaa0004", at.Add(-time.Hour)),
		policytest.RunningPod("b", 2, "bbbbbbbbbbbb0002", at.Add(-time.Hour)),
	}
	baseline := BaselineOf(before)
	now := []*corev1.Pod{
		policytest.RunningPod("a", 5, "aaaaaaaaaaaa0005", at.Add(time.Minute)),
		policytest.RunningPod("b", 3, "bbbbbbbbbbbb0003", at.Add(2*time.Minute)),
	}
	succeeded := func(name, newID string, killed bool) appsv1beta1.ContainerRecreateRequest {
		return appsv1beta1.ContainerRecreateRequest{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID(name + "-uid")},
			Status: appsv1beta1.ContainerRecreateRequestStatus{
				Phase: appsv1beta1.PhaseCompleted, Result: appsv1beta1.ResultSucceeded,
				ContainerRecreateStates: []appsv1beta1.ContainerRecreateRequestContainerRecreateState{{Name: "app", Phase: appsv1beta1.PhaseSucceeded, IsKilled: killed}},
				ContainerStatusSnapshot: []appsv1beta1.ContainerRecreateRequestSyncContainerStatus{{Name: "app", ContainerID: "containerd://" + newID, Ready: true}},
			},
		}
	}
	ownA := succeeded("run-a", "aaaaaaaaaaaa0005", true)     // the run's request stopped a
	byHand := succeeded("by-hand", "bbbbbbbbbbbb0003", true) // by hand, ahead of the run's on b
	ownB := succeeded("run-b", "bbbbbbbbbbbb0003", false)    // queued behind it: nothing stopped
	facts := GatherRequests(&v1alpha1.RecreatePolicy{}, []appsv1beta1.ContainerRecreateRequest{ownA, byHand, ownB}, nil, at.Add(time.Hour))
	requests := map[types.UID]*appsv1beta1.ContainerRecreateRequest{"a-uid": &ownA, "b-uid": &ownB}
	p := Progress(run, now, policyspec.Containers{}, requests, baseline, facts.MadeBy)
	if p.Recreated != 1 || len(p.UpToDate) != 1 || p.UpToDate[0].Pod.Name != "b" || len(p.Pending) != 0 || p.Failed != nil {
		t.Errorf("recreated %d, up to date %v, pending %v, failed %v; want 1 (a), [b] (started again by another request), none, none", p.Recreated, p.UpToDate, p.Pending, p.Failed)
	}

	// The run's own request that stopped the container, its
	// isKilled lost (the daemon restarted before recording it), still
	// recreated the pod: no other request made the instance.
	ownB.Status.ContainerRecreateStates[0].IsKilled = false
	facts = GatherRequests(&v1alpha1.RecreatePolicy{}, []appsv1beta1.ContainerRecreateRequest{ownA, ownB}, nil, at.Add(time.Hour))
	if p := Progress(run, now, policyspec.Containers{}, requests, baseline, facts.MadeBy); p.Recreated != 2 || len(p.UpToDate) != 0 {
		t.Errorf("without another request: recreated %d, up to date %v; want 2, none", p.Recreated, p.UpToDate)
	}

	// While the cache still shows b's old instance, b is neither pending
	// again nor up to date.
	if p := Progress(run, []*corev1.Pod{now[0], before[1]}, policyspec.Containers{}, requests, baseline, map[string]types.UID{"containerd://bbbbbbbbbbbb0003": "by-hand-uid"}); p.Recreated != 1 || len(p.UpToDate) != 0 || len(p.Pending) != 0 {
		t.Errorf("cache behind: recreated %d, up to date %v, pending %v; want 1, none, none", p.Recreated, p.UpToDate, p.Pending)
	}
}
