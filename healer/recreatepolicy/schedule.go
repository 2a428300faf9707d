package recreatepolicy

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/healer/planner"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
)

// tick is what the schedule asks for at now.
type tick struct {
	// due is the latest fire time not yet handled, zero for none.
	due time.Time
	// missed is the latest fire time skipped because it is older than the
	// starting deadline, zero for none.
	missed time.Time
	next   time.Time
}

// maxTicks bounds each walk over fire times, for a schedule that fires
// often after a long time without the manager.
const maxTicks = 10_000

// schedule works out the fire times between the last handled one (or the
// policy's creation) and now: a fire time later than the starting deadline
// allows is missed, the latest one within it is due.
func schedule(s *policyspec.Schedule, since, now time.Time) tick {
	t := tick{next: s.Next(now)}
	earliest := now.Add(-s.StartingDeadline)
	x := s.Next(since)
	for i := 0; x.Before(earliest) && i < maxTicks; i++ {
		t.missed, x = x, s.Next(x)
	}
	if x.Before(earliest) {
		// Too many to walk: the ones left are missed too.
		x = s.Next(earliest.Add(-time.Nanosecond))
	}
	for i := 0; !x.After(now) && i < maxTicks; i++ {
		t.due, x = x, s.Next(x)
	}
	return t
}

// runProgress is how far a run is for the pods selected now.
type runProgress struct {
	// pending are the run's candidates: the pods left to recreate.
	pending []*planner.Candidate
	done    int
	failed  *appsv1beta1.ContainerRecreateRequest
	// skipped are the pods with nothing the kubelet would start again.
	skipped []*corev1.Pod
}

// progress sorts the selected pods of the run into done (recreated
// since its time, by the run's request or otherwise), skipped (no container the
// kubelet would start again) and pending.
func progress(run planner.Trigger, pods []*corev1.Pod, containers policyspec.Containers, runRequests map[types.UID]*appsv1beta1.ContainerRecreateRequest) runProgress {
	t := run.Run
	reason := fmt.Sprintf("scheduled run of %s", t.UTC().Format(time.RFC3339))
	if run.Requested {
		reason = fmt.Sprintf("rolling restart requested for %s", t.UTC().Format(time.RFC3339))
	}
	var p runProgress
	for _, pod := range pods {
		if crr := runRequests[pod.UID]; crr != nil {
			if crr.Status.Phase == appsv1beta1.PhaseCompleted {
				if crr.Status.Result != appsv1beta1.ResultSucceeded && p.failed == nil {
					p.failed = crr
				}
				p.done++
			}
			// In flight: neither done nor pending.
			continue
		}
		names := containers.Candidates(pod)
		switch {
		case len(names) == 0:
			p.skipped = append(p.skipped, pod)
		case startedSince(pod, names, t):
			p.done++
		default:
			p.pending = append(p.pending, &planner.Candidate{
				Pod: pod, Containers: names,
				Trigger: run,
				Reason:  reason,
			})
		}
	}
	return p
}

// startedSince reports whether every one of the pod's containers named
// runs and started after t: such a pod has nothing left to do in the run.
func startedSince(pod *corev1.Pod, names []string, t time.Time) bool {
	started := map[string]time.Time{}
	for _, list := range [][]corev1.ContainerStatus{pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses} {
		for _, st := range list {
			if st.State.Running != nil {
				started[st.Name] = st.State.Running.StartedAt.Time
			}
		}
	}
	for _, name := range names {
		// A container started in the run's second shows that second (start
		// times have a resolution of one second) and counts as started
		// since.
		if s, ok := started[name]; !ok || s.Before(t.Truncate(time.Second)) {
			return false
		}
	}
	return true
}
