package recreatepolicy

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/healer/planner"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
)

// runProgress is how far a run is for the pods selected now.
type runProgress struct {
	// pending are the run's candidates: the pods left to recreate.
	pending []*planner.PodCandidate
	// recreated counts the pods the run's requests recreated, those
	// deleted since included: the count never goes down.
	recreated int
	// upToDate are the pods that need nothing: their containers were
	// started again since the run began, by something other than the run.
	upToDate []*planner.PodCandidate
	failed   *appsv1beta1.ContainerRecreateRequest
	// skipped are the pods with nothing the kubelet would start again.
	skipped []*corev1.Pod
	// leftAlone are, by pod, the containers the policy names that the run
	// does not recreate because the kubelet would not start them again:
	// one for each skipped pod (without containers when the policy names
	// none of the pod's), and one for each other pod that has such a
	// container beside those it recreates.
	leftAlone []*planner.PodCandidate
}

// progress counts the pods the run's requests recreated and sorts the
// run's pods selected now into up to date (started again since the run began, by identity: baseline),
// skipped (no container the kubelet would start again) and pending. A
// selected pod the baseline does not list joined after the run began and
// is left out; a nil baseline (a run recorded without one) lists every
// pod, none started again.
//
// A request of the run that succeeded on instances another request made
// (madeBy; see byAnother) did not recreate its pod: the pod counts as up
// to date once the cache shows it started again, as one that another
// request restarted before the run got to it.
func progress(run planner.Trigger, pods []*corev1.Pod, containers policyspec.Containers, runRequests map[types.UID]*appsv1beta1.ContainerRecreateRequest, baseline map[string]string, madeBy map[string]types.UID) runProgress {
	var p runProgress
	reason := run.RunReason()
	candidate := func(pod *corev1.Pod, containers []string) *planner.PodCandidate {
		return &planner.PodCandidate{Pod: pod, Containers: containers, Trigger: run, Reason: reason}
	}
	for _, crr := range runRequests {
		if crr.Status.Phase == appsv1beta1.PhaseCompleted && crr.Status.Result == appsv1beta1.ResultSucceeded && !byAnother(crr, madeBy) {
			p.recreated++
		}
	}
	for _, pod := range pods {
		if crr := runRequests[pod.UID]; crr != nil {
			// A failed request halts the run only for a pod still
			// selected: one that failed because its pod was deleted
			// leaves nothing to recreate. In flight: neither done nor
			// pending.
			if crr.Status.Phase == appsv1beta1.PhaseCompleted && crr.Status.Result != appsv1beta1.ResultSucceeded && p.failed == nil {
				p.failed = crr
			}
			if byAnother(crr, madeBy) {
				// Never pending again: up to date once the cache shows
				// the new instance (until then the pod is in flight).
				names, _ := containers.Split(pod)
				if recorded, listed := baseline[string(pod.UID)]; listed && len(names) > 0 && startedAgain(pod, names, recorded) {
					p.upToDate = append(p.upToDate, candidate(pod, names))
				}
			}
			continue
		}
		recorded, listed := baseline[string(pod.UID)]
		if baseline != nil && !listed {
			continue
		}
		names, left := containers.Split(pod)
		if len(left) > 0 || len(names) == 0 {
			p.leftAlone = append(p.leftAlone, candidate(pod, left))
		}
		switch {
		case len(names) == 0:
			p.skipped = append(p.skipped, pod)
		case listed && startedAgain(pod, names, recorded):
			p.upToDate = append(p.upToDate, candidate(pod, names))
		default:
			p.pending = append(p.pending, candidate(pod, names))
		}
	}
	return p
}
