package planner

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	apipods "github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
)

// A rolling run's pods: what it saw of them as it began (the baseline)
// and how far it is with those selected now (Progress).

// RunProgress is how far a run is for the pods selected now.
type RunProgress struct {
	// Pending are the run's candidates: the pods left to recreate.
	Pending []*PodCandidate
	// Recreated counts the pods the run's requests recreated, those
	// deleted since included: the count never goes down.
	Recreated int
	// UpToDate are the pods that need nothing: their containers were
	// started again since the run began, by something other than the run.
	UpToDate []*PodCandidate
	// Failed is a request of the run that ended without success for a pod
	// still selected, nil for none.
	Failed *appsv1beta1.ContainerRecreateRequest
	// Skipped are the pods with nothing the kubelet would start again.
	Skipped []*corev1.Pod
	// LeftAlone are, by pod, the containers the policy names that the run
	// does not recreate because the kubelet would not start them again:
	// one for each skipped pod (without containers when the policy names
	// none of the pod's), and one for each other pod that has such a
	// container beside those it recreates.
	LeftAlone []*PodCandidate
}

// Progress counts the pods the run's requests recreated and sorts the
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
func Progress(run Trigger, pods []*corev1.Pod, containers policyspec.Containers, runRequests map[types.UID]*appsv1beta1.ContainerRecreateRequest, baseline map[string]string, madeBy map[string]types.UID) RunProgress {
	var p RunProgress
	reason := run.RunReason()
	candidate := func(pod *corev1.Pod, containers []string) *PodCandidate {
		return &PodCandidate{Pod: pod, Containers: containers, Trigger: run, Reason: reason}
	}
	for _, crr := range runRequests {
		if crr.Status.Phase == appsv1beta1.PhaseCompleted && crr.Status.Result == appsv1beta1.ResultSucceeded && !byAnother(crr, madeBy) {
			p.Recreated++
		}
	}
	for _, pod := range pods {
		if crr := runRequests[pod.UID]; crr != nil {
			// A failed request halts the run only for a pod still
			// selected: one that failed because its pod was deleted
			// leaves nothing to recreate. In flight: neither done nor
			// pending.
			if crr.Status.Phase == appsv1beta1.PhaseCompleted && crr.Status.Result != appsv1beta1.ResultSucceeded && p.Failed == nil {
				p.Failed = crr
			}
			if byAnother(crr, madeBy) {
				// Never pending again: up to date once the cache shows
				// the new instance (until then the pod is in flight).
				names, _ := containers.Split(pod)
				if recorded, listed := baseline[string(pod.UID)]; listed && len(names) > 0 && startedAgain(pod, names, recorded) {
					p.UpToDate = append(p.UpToDate, candidate(pod, names))
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
			p.LeftAlone = append(p.LeftAlone, candidate(pod, left))
		}
		switch {
		case len(names) == 0:
			p.Skipped = append(p.Skipped, pod)
		case listed && startedAgain(pod, names, recorded):
			p.UpToDate = append(p.UpToDate, candidate(pod, names))
		default:
			p.Pending = append(p.Pending, candidate(pod, names))
		}
	}
	return p
}

// byAnother says whether crr succeeded on instances another request made:
// it stopped none of its containers, and each new instance its snapshot
// names followed another request's stop (crr was queued behind it on the
// pod, and found the instances new once its turn came). It did not
// recreate the pod; the pod was started again by something else.
func byAnother(crr *appsv1beta1.ContainerRecreateRequest, madeBy map[string]types.UID) bool {
	if crr.Status.Phase != appsv1beta1.PhaseCompleted || crr.Status.Result != appsv1beta1.ResultSucceeded || len(crr.Status.ContainerStatusSnapshot) == 0 {
		return false
	}
	if crr.AnyKilled() {
		return false
	}
	for _, cs := range crr.Status.ContainerStatusSnapshot {
		if by, ok := madeBy[cs.ContainerID]; !ok || by == crr.UID {
			return false
		}
	}
	return true
}

// BaselineOf records what a run sees of its pods as it begins: each pod's
// UID to its containers' instances (status.run.baseline).
func BaselineOf(pods []*corev1.Pod) map[string]string {
	out := make(map[string]string, len(pods))
	for _, pod := range pods {
		out[string(pod.UID)] = instancesOf(pod)
	}
	return out
}

// BaselineBytes is the size of a baseline as MaxBaselineBytes counts it:
// its keys' and values' bytes.
func BaselineBytes(baseline map[string]string) int {
	n := 0
	for uid, instances := range baseline {
		n += len(uid) + len(instances)
	}
	return n
}

// instancesOf writes the instance of each of the pod's containers,
// regular and init, as "NAME=INSTANCE" sorted by name and separated by
// commas.
func instancesOf(pod *corev1.Pod) string {
	var parts []string
	for _, list := range [][]corev1.ContainerStatus{pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses} {
		for i := range list {
			parts = append(parts, list[i].Name+"="+apipods.Instance(&list[i]))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// startedAgain reports whether every named container of the pod runs as
// another instance than the one recorded: such a pod has nothing left to
// do in the run. A container the record lacks, or that does not run now,
// has not been started again.
func startedAgain(pod *corev1.Pod, names []string, recorded string) bool {
	before := map[string]string{}
	for part := range strings.SplitSeq(recorded, ",") {
		if name, instance, ok := strings.Cut(part, "="); ok {
			before[name] = instance
		}
	}
	for _, name := range names {
		st := apipods.ContainerStatus(pod, name)
		was, ok := before[name]
		if st == nil || st.State.Running == nil || !ok || apipods.Instance(st) == was {
			return false
		}
	}
	return true
}

// UnrestartableMessage says why the pod's containers named are left
// alone: for each, the field of the pod by which the kubelet would not
// start it again once stopped (apipods.Unrestartable). Without containers, the
// policy names none of the pod's. A pod of many containers gets a
// message cut to a decision's bound.
func UnrestartableMessage(pod *corev1.Pod, containers []string) string {
	if len(containers) == 0 {
		return "the policy's containers name none of the pod's containers and native sidecars"
	}
	return v1alpha1.Truncate(apipods.UnrestartableAll(pod, containers), v1alpha1.MaxReasonLength)
}
