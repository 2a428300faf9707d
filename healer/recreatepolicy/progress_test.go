package recreatepolicy

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/planner"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
)

// runPod is a running pod whose container app runs as instance restarts
// of id, started at started.
func runPod(name string, restarts int32, id string, started time.Time) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID(name + "-uid")},
		Spec:       corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{{Name: "app"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
			Name: "app", ContainerID: "containerd://" + id, RestartCount: restarts,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(started)}},
		}}},
	}
}

// TestRunCountsAPodDoneOnlyByIdentity: pods that started in the second of
// the run's start (their startedAt reads that second) but were not touched
// since are left to recreate; a pod whose container runs as a new instance
// is up to date, never "recreated"; a pod that joined after the run began is
// not part of it; only the run's succeeded requests count as recreated.
func TestRunCountsAPodDoneOnlyByIdentity(t *testing.T) {
	at := time.Date(2026, 11, 26, 3, 0, 0, 400_000_000, time.UTC)
	second := at.Truncate(time.Second)
	run := planner.Trigger{Kind: planner.TriggerSchedule, Run: at, Requested: true}
	fresh := []*corev1.Pod{
		runPod("a", 0, "aaaaaaaaaaaaaaaa", second),
		runPod("b", 0, "bbbbbbbbbbbbbbbb", second),
		runPod("c", 0, "cccccccccccccccc", second),
		runPod("d", 0, "dddddddddddddddd", second.Add(-time.Hour)),
	}
	baseline := baselineOf(fresh)
	containers := policyspec.Containers{}

	now := []*corev1.Pod{
		fresh[0],
		fresh[1],
		runPod("c", 1, "cccccccccccc0002", second.Add(time.Second)), // crashed and restarted
		fresh[3],
		runPod("e", 0, "eeeeeeeeeeeeeeee", second), // joined after the run began
	}
	requests := map[types.UID]*appsv1beta1.ContainerRecreateRequest{
		"d-uid": {Status: appsv1beta1.ContainerRecreateRequestStatus{Phase: appsv1beta1.PhaseCompleted, Result: appsv1beta1.ResultSucceeded}},
	}
	p := progress(run, now, containers, requests, baseline, nil)
	var pending []string
	for _, c := range p.pending {
		pending = append(pending, c.Pod.Name)
	}
	if len(pending) != 2 || pending[0] != "a" || pending[1] != "b" {
		t.Errorf("pending %v, want [a b]: started in the run's second, never touched since", pending)
	}
	if p.recreated != 1 || len(p.upToDate) != 1 || p.upToDate[0].Pod.Name != "c" || len(p.skipped) != 0 || p.failed != nil {
		t.Errorf("recreated %d, up to date %v, skipped %d, failed %v; want 1 (d, by its request), [c] (a new instance), 0, none", p.recreated, p.upToDate, len(p.skipped), p.failed)
	}
	if p.pending[0].Reason != "rolling restart requested for 2026-11-26T03:00:00Z" {
		t.Errorf("reason %q", p.pending[0].Reason)
	}

	// A failed request is the run's failure, not a recreation.
	requests["d-uid"].Status.Result = appsv1beta1.ResultFailed
	if p := progress(run, now, containers, requests, baseline, nil); p.recreated != 0 || p.failed == nil {
		t.Errorf("with d's request failed: recreated %d, failed %v; want 0 and d's request", p.recreated, p.failed)
	}

	// A run recorded without a baseline restarts every pod it has no
	// request for.
	if p := progress(run, now, containers, map[types.UID]*appsv1beta1.ContainerRecreateRequest{}, nil, nil); len(p.pending) != 5 {
		t.Errorf("without a baseline: %d pending, want all 5", len(p.pending))
	}
}

func TestStartedAgainComparesInstances(t *testing.T) {
	started := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
	before := runPod("a", 2, "aaaaaaaaaaaaaaaa", started)
	recorded := instancesOf(before)
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"same instance, later start time", runPod("a", 2, "aaaaaaaaaaaaaaaa", started.Add(time.Hour)), false},
		{"new ID", runPod("a", 2, "bbbbbbbbbbbbbbbb", started), true},
		{"higher restart count", runPod("a", 3, "aaaaaaaaaaaaaaaa", started), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := startedAgain(tc.pod, []string{"app"}, recorded); got != tc.want {
				t.Fatalf("startedAgain = %v, want %v (recorded %q)", got, tc.want, recorded)
			}
		})
	}
	waiting := runPod("a", 3, "bbbbbbbbbbbbbbbb", started)
	waiting.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
	if startedAgain(waiting, []string{"app"}, recorded) {
		t.Fatal("a container that does not run counts as started again")
	}
	if startedAgain(runPod("a", 3, "bbbbbbbbbbbbbbbb", started), []string{"app"}, "") {
		t.Fatal("a container the record lacks counts as started again")
	}
}

// TestARecreatedPodDeletedSinceStaysRecreated: a pod the run's request
// recreated and that was deleted since (scaled down) still counts as
// recreated, so that the run's count never goes down; a pod deleted while
// its request ran, which failed for it, does not halt the run (found by
// the soak: a run reported 2 of 5 recreated where 3 had been, after the
// Deployment was scaled down).
func TestARecreatedPodDeletedSinceStaysRecreated(t *testing.T) {
	at := time.Date(2026, 11, 29, 22, 40, 0, 0, time.UTC)
	run := planner.Trigger{Kind: planner.TriggerSchedule, Run: at}
	pods := []*corev1.Pod{
		runPod("a", 0, "aaaaaaaaaaaaaaaa", at.Add(-time.Hour)),
		runPod("b", 0, "bbbbbbbbbbbbbbbb", at.Add(-time.Hour)),
		runPod("c", 0, "cccccccccccccccc", at.Add(-time.Hour)),
		runPod("d", 0, "dddddddddddddddd", at.Add(-time.Hour)),
	}
	baseline := baselineOf(pods)
	done := func(r appsv1beta1.ContainerRecreateRequestResult) *appsv1beta1.ContainerRecreateRequest {
		return &appsv1beta1.ContainerRecreateRequest{Status: appsv1beta1.ContainerRecreateRequestStatus{Phase: appsv1beta1.PhaseCompleted, Result: r}}
	}
	requests := map[types.UID]*appsv1beta1.ContainerRecreateRequest{
		"a-uid": done(appsv1beta1.ResultSucceeded),
		"b-uid": done(appsv1beta1.ResultSucceeded), // b deleted since
		"c-uid": done(appsv1beta1.ResultFailed),    // c deleted while its request ran
	}
	p := progress(run, []*corev1.Pod{pods[0], pods[3]}, policyspec.Containers{}, requests, baseline, nil)
	if p.recreated != 2 || p.failed != nil || len(p.pending) != 1 || p.pending[0].Pod.Name != "d" {
		t.Errorf("recreated %d, failed %v, pending %v; want 2 (a, and b deleted since), none failed (c's pod is gone), [d]", p.recreated, p.failed, p.pending)
	}
}

// TestARunsRequestQueuedBehindAnotherDoesNotCountAsRecreated: a request of
// the run made for a pod while another request of the pod (by hand, unseen
// in the manager's lagging cache) was queued ahead of it succeeds on that
// one's new instance without stopping anything: the pod was started again
// by something else, up to date, not recreated by the run (found by the
// soak, seed 13: a restartAt run reported 3 of 4 recreated where its own
// requests had restarted 2, the third pod restarted by by-hand-10).
func TestARunsRequestQueuedBehindAnotherDoesNotCountAsRecreated(t *testing.T) {
	at := time.Date(2026, 11, 30, 19, 2, 10, 0, time.UTC)
	run := planner.Trigger{Kind: planner.TriggerSchedule, Run: at, Requested: true}
	before := []*corev1.Pod{
		runPod("a", 4, "aaaaaaaaaaaa0004", at.Add(-time.Hour)),
		runPod("b", 2, "bbbbbbbbbbbb0002", at.Add(-time.Hour)),
	}
	baseline := baselineOf(before)
	now := []*corev1.Pod{
		runPod("a", 5, "aaaaaaaaaaaa0005", at.Add(time.Minute)),
		runPod("b", 3, "bbbbbbbbbbbb0003", at.Add(2*time.Minute)),
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
	facts := gatherRequests(&v1alpha1.RecreatePolicy{}, []appsv1beta1.ContainerRecreateRequest{ownA, byHand, ownB}, nil, at.Add(time.Hour))
	requests := map[types.UID]*appsv1beta1.ContainerRecreateRequest{"a-uid": &ownA, "b-uid": &ownB}
	p := progress(run, now, policyspec.Containers{}, requests, baseline, facts.madeBy)
	if p.recreated != 1 || len(p.upToDate) != 1 || p.upToDate[0].Pod.Name != "b" || len(p.pending) != 0 || p.failed != nil {
		t.Errorf("recreated %d, up to date %v, pending %v, failed %v; want 1 (a), [b] (started again by another request), none, none", p.recreated, p.upToDate, p.pending, p.failed)
	}

	// The run's own request that stopped the container, its
	// isKilled lost (the daemon restarted before recording it), still
	// recreated the pod: no other request made the instance.
	ownB.Status.ContainerRecreateStates[0].IsKilled = false
	facts = gatherRequests(&v1alpha1.RecreatePolicy{}, []appsv1beta1.ContainerRecreateRequest{ownA, ownB}, nil, at.Add(time.Hour))
	if p := progress(run, now, policyspec.Containers{}, requests, baseline, facts.madeBy); p.recreated != 2 || len(p.upToDate) != 0 {
		t.Errorf("without another request: recreated %d, up to date %v; want 2, none", p.recreated, p.upToDate)
	}

	// While the cache still shows b's old instance, b is neither pending
	// again nor up to date.
	if p := progress(run, []*corev1.Pod{now[0], before[1]}, policyspec.Containers{}, requests, baseline, map[string]types.UID{"containerd://bbbbbbbbbbbb0003": "by-hand-uid"}); p.recreated != 1 || len(p.upToDate) != 0 || len(p.pending) != 0 {
		t.Errorf("cache behind: recreated %d, up to date %v, pending %v; want 1, none, none", p.recreated, p.upToDate, p.pending)
	}
}
