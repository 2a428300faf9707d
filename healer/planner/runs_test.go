package planner

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
	"github.com/rejuv-dev/rejuv/policy/policytest"
)

// TestRunCountsAPodDoneOnlyByIdentity: pods that started in the second of
// the run's start (their startedAt reads that second) but were not touched
// since are left to recreate; a pod whose container runs as a new instance
// is up to date, never "recreated"; a pod that joined after the run began is
// not part of it; only the run's succeeded requests count as recreated.
func TestRunCountsAPodDoneOnlyByIdentity(t *testing.T) {
	at := time.Date(2026, 11, 26, 3, 0, 0, 400_000_000, time.UTC)
	second := at.Truncate(time.Second)
	run := Trigger{Kind: TriggerSchedule, Run: at, Requested: true}
	fresh := []*corev1.Pod{
		policytest.RunningPod("a", 0, "aaaaaaaaaaaaaaaa", second),
		policytest.RunningPod("b", 0, "bbbbbbbbbbbbbbbb", second),
		policytest.RunningPod("c", 0, "cccccccccccccccc", second),
		policytest.RunningPod("d", 0, "dddddddddddddddd", second.Add(-time.Hour)),
	}
	baseline := BaselineOf(fresh)
	containers := policyspec.Containers{}

	now := []*corev1.Pod{
		fresh[0],
		fresh[1],
		policytest.RunningPod("c", 1, "cccccccccccc0002", second.Add(time.Second)), // crashed and restarted
		fresh[3],
		policytest.RunningPod("e", 0, "eeeeeeeeeeeeeeee", second), // joined after the run began
	}
	requests := map[types.UID]*appsv1beta1.ContainerRecreateRequest{
		"d-uid": {Status: appsv1beta1.ContainerRecreateRequestStatus{Phase: appsv1beta1.PhaseCompleted, Result: appsv1beta1.ResultSucceeded}},
	}
	p := Progress(run, now, containers, requests, baseline, nil)
	var pending []string
	for _, c := range p.Pending {
		pending = append(pending, c.Pod.Name)
	}
	if len(pending) != 2 || pending[0] != "a" || pending[1] != "b" {
		t.Errorf("pending %v, want [a b]: started in the run's second, never touched since", pending)
	}
	if p.Recreated != 1 || len(p.UpToDate) != 1 || p.UpToDate[0].Pod.Name != "c" || len(p.Skipped) != 0 || p.Failed != nil {
		t.Errorf("recreated %d, up to date %v, skipped %d, failed %v; want 1 (d, by its request), [c] (a new instance), 0, none", p.Recreated, p.UpToDate, len(p.Skipped), p.Failed)
	}
	if p.Pending[0].Reason != "rolling restart requested for 2026-11-26T03:00:00Z" {
		t.Errorf("reason %q", p.Pending[0].Reason)
	}

	// A failed request is the run's failure, not a recreation.
	requests["d-uid"].Status.Result = appsv1beta1.ResultFailed
	if p := Progress(run, now, containers, requests, baseline, nil); p.Recreated != 0 || p.Failed == nil {
		t.Errorf("with d's request failed: recreated %d, failed %v; want 0 and d's request", p.Recreated, p.Failed)
	}

	// A run recorded without a baseline restarts every pod it has no
	// request for.
	if p := Progress(run, now, containers, map[types.UID]*appsv1beta1.ContainerRecreateRequest{}, nil, nil); len(p.Pending) != 5 {
		t.Errorf("without a baseline: %d pending, want all 5", len(p.Pending))
	}
}

func TestStartedAgainComparesInstances(t *testing.T) {
	started := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
	before := policytest.RunningPod("a", 2, "aaaaaaaaaaaaaaaa", started)
	recorded := instancesOf(before)
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"same instance, later start time", policytest.RunningPod("a", 2, "aaaaaaaaaaaaaaaa", started.Add(time.Hour)), false},
		{"new ID", policytest.RunningPod("a", 2, "bbbbbbbbbbbbbbbb", started), true},
		{"higher restart count", policytest.RunningPod("a", 3, "aaaaaaaaaaaaaaaa", started), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := startedAgain(tc.pod, []string{"app"}, recorded); got != tc.want {
				t.Fatalf("startedAgain = %v, want %v (recorded %q)", got, tc.want, recorded)
			}
		})
	}
	waiting := policytest.RunningPod("a", 3, "bbbbbbbbbbbbbbbb", started)
	waiting.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
	if startedAgain(waiting, []string{"app"}, recorded) {
		t.Fatal("a container that does not run counts as started again")
	}
	if startedAgain(policytest.RunningPod("a", 3, "bbbbbbbbbbbbbbbb", started), []string{"app"}, "") {
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
	run := Trigger{Kind: TriggerSchedule, Run: at}
	pods := []*corev1.Pod{
		policytest.RunningPod("a", 0, "aaaaaaaaaaaaaaaa", at.Add(-time.Hour)),
		policytest.RunningPod("b", 0, "bbbbbbbbbbbbbbbb", at.Add(-time.Hour)),
		policytest.RunningPod("c", 0, "cccccccccccccccc", at.Add(-time.Hour)),
		policytest.RunningPod("d", 0, "dddddddddddddddd", at.Add(-time.Hour)),
	}
	baseline := BaselineOf(pods)
	done := func(r appsv1beta1.ContainerRecreateRequestResult) *appsv1beta1.ContainerRecreateRequest {
		return &appsv1beta1.ContainerRecreateRequest{Status: appsv1beta1.ContainerRecreateRequestStatus{Phase: appsv1beta1.PhaseCompleted, Result: r}}
	}
	requests := map[types.UID]*appsv1beta1.ContainerRecreateRequest{
		"a-uid": done(appsv1beta1.ResultSucceeded),
		"b-uid": done(appsv1beta1.ResultSucceeded), // b deleted since
		"c-uid": done(appsv1beta1.ResultFailed),    // c deleted while its request ran
	}
	p := Progress(run, []*corev1.Pod{pods[0], pods[3]}, policyspec.Containers{}, requests, baseline, nil)
	if p.Recreated != 2 || p.Failed != nil || len(p.Pending) != 1 || p.Pending[0].Pod.Name != "d" {
		t.Errorf("recreated %d, failed %v, pending %v; want 2 (a, and b deleted since), none failed (c's pod is gone), [d]", p.Recreated, p.Failed, p.Pending)
	}
}
