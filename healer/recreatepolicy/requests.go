package recreatepolicy

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	apipods "github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/planner"
)

// requestFacts is what the namespace's ContainerRecreateRequests say about
// a policy's pods and its own past recreations.
type requestFacts struct {
	// inFlight are pods with a request that has not completed, whoever
	// created it.
	inFlight map[types.UID]bool
	// own are the policy's requests in flight.
	own int
	// lastRecreated and recreations are, per container, when the policy
	// last asked for its recreation and how often it did.
	lastRecreated map[planner.ContainerKey]time.Time
	recreations   map[planner.ContainerKey]int
	// lastRule is, per container, the rule whose match made the policy's
	// last request for it; absent when a run made it.
	lastRule map[planner.ContainerKey]string
	// createdLastHour counts the policy's requests of the last hour.
	createdLastHour int
	// runs are the policy's requests of each scheduled run, by run time
	// (RFC 3339) and pod UID.
	runs map[string]map[types.UID]*appsv1beta1.ContainerRecreateRequest
	// failed are the names of the policy's requests of a rule that
	// failed, and of those a pause withdrew: the next request for the
	// same finding or run's pod is a retry, named apart.
	failed map[string]bool
	// completedCharges are, by pod name, when the budgets were charged for
	// a policy's request of the namespace that has completed since:
	// entries of the budgets' disruptedPods to take back.
	completedCharges map[string]time.Time
	// madeBy are, by container ID, the requests (whoever made them) whose
	// stop the instance followed: it stopped the container (isKilled) and
	// its snapshot names the instance. A request queued behind another of
	// its pod succeeds on the instance that one made, stopping nothing.
	madeBy map[string]types.UID
}

// gatherRequests sums up crrs for policy p. The policy's own requests are
// those it controls (its UID), not those that carry its name in the
// rejuv.dev/policy label, which whoever may create a request could set;
// and only a policy's request carries a charge of the budgets.
func gatherRequests(p *v1alpha1.RecreatePolicy, crrs []appsv1beta1.ContainerRecreateRequest, pods map[string]*corev1.Pod, now time.Time) *requestFacts {
	f := &requestFacts{
		inFlight:      map[types.UID]bool{},
		lastRecreated: map[planner.ContainerKey]time.Time{},
		recreations:   map[planner.ContainerKey]int{},
		lastRule:      map[planner.ContainerKey]string{},
		runs:          map[string]map[types.UID]*appsv1beta1.ContainerRecreateRequest{},
		failed:        map[string]bool{},

		completedCharges: map[string]time.Time{},
		madeBy:           map[string]types.UID{},
	}
	for i := range crrs {
		crr := &crrs[i]
		for _, s := range crr.Status.ContainerRecreateStates {
			if id := snapshotID(crr, s.Name); s.IsKilled && id != "" {
				f.madeBy[id] = crr.UID
			}
		}
		uid := types.UID(crr.Labels[appsv1beta1.PodUIDLabel])
		if uid == "" {
			if pod := pods[crr.Spec.PodName]; pod != nil {
				uid = pod.UID
			}
		}
		active := unfinished(crr)
		unseen := !active && uid != "" && recreationUnseen(crr, pods[crr.Spec.PodName], uid)
		if (active || unseen) && uid != "" {
			f.inFlight[uid] = true
		}
		// A budget keeps one entry per pod, the latest charge's: a pod
		// recreated twice within the timeout has two completed requests.
		// A charge is taken back only once the cache shows the recreation.
		owner := v1alpha1.ControllingPolicy(crr)
		if at, ok := chargedAt(crr); ok && owner != nil && !active && !unseen && now.Sub(at) < disruptedTimeout && at.After(f.completedCharges[crr.Spec.PodName]) {
			f.completedCharges[crr.Spec.PodName] = at
		}
		if owner == nil || owner.UID != p.UID {
			continue
		}
		if withdrawn(crr) {
			// It recreated nothing: what asked for it asks again, under
			// the next attempt's name.
			f.failed[crr.Name] = true
			continue
		}
		if active {
			f.own++
		}
		created := crr.CreationTimestamp.Time
		if now.Sub(created) < time.Hour {
			f.createdLastHour++
		}
		rule, byRule := strings.CutPrefix(crr.Labels[appsv1beta1.TriggerLabel], string(planner.TriggerRule)+".")
		for _, c := range crr.Spec.Containers {
			key := planner.ContainerKey{Pod: uid, Container: c.Name}
			f.recreations[key]++
			if last, seen := f.lastRecreated[key]; !seen || created.After(last) {
				f.lastRecreated[key] = created
				delete(f.lastRule, key)
				if byRule {
					f.lastRule[key] = rule
				}
			}
		}
		if byRule && crr.Status.Phase == appsv1beta1.PhaseCompleted && crr.Status.Result == appsv1beta1.ResultFailed {
			f.failed[crr.Name] = true
		}
		if run := crr.Annotations[appsv1beta1.RunAnnotation]; run != "" && uid != "" {
			if f.runs[run] == nil {
				f.runs[run] = map[types.UID]*appsv1beta1.ContainerRecreateRequest{}
			}
			f.runs[run][uid] = crr
		}
	}
	return f
}

// attempt is the first attempt at c whose request has not failed: the
// policy's requests are named by their attempt (planner.Instance), and a
// rule's finding whose request failed, its containers not recreated, is
// tried again under the next name rather than taken for one in flight; so
// is a run's pod whose request a pause withdrew (another failure of a
// run's request halts the run instead).
func (f *requestFacts) attempt(p *v1alpha1.RecreatePolicy, c *planner.PodCandidate) int {
	try := *c
	try.Attempt = 0
	for f.failed[planner.RequestName(p, &try)] {
		try.Attempt++
	}
	return try.Attempt
}

// recreationUnseen says whether the cache still shows pod with a container
// instance that the completed request recreated. The daemon completes a
// request only once the pod's status reports the new instance, so such a
// cache lags behind the requests' (a watch backing off, a loaded API
// server): its readiness of the pod is from before the stop, and the pod
// counts as still being recreated until the cache catches up. Compared by
// container IDs, not by clocks.
func recreationUnseen(crr *appsv1beta1.ContainerRecreateRequest, pod *corev1.Pod, uid types.UID) bool {
	if pod == nil || pod.UID != uid {
		return false
	}
	for _, c := range crr.Spec.Containers {
		if c.StatusContext == nil || c.StatusContext.ContainerID == "" {
			continue
		}
		recreated := false
		for _, st := range crr.Status.ContainerRecreateStates {
			recreated = recreated || (st.Name == c.Name && st.Phase == appsv1beta1.PhaseSucceeded)
		}
		if cs := apipods.ContainerStatus(pod, c.Name); recreated && cs != nil && cs.ContainerID == c.StatusContext.ContainerID {
			return true
		}
	}
	return false
}

// withdrawn says whether the manager ended the request for a pause before
// a daemon began it (v1alpha1.PausedMessage; only the manager and the
// daemons write a request's status): nothing of it was stopped.
func withdrawn(crr *appsv1beta1.ContainerRecreateRequest) bool {
	if crr.Status.Phase != appsv1beta1.PhaseCompleted || !strings.HasPrefix(crr.Status.Message, v1alpha1.PausedMessage) {
		return false
	}
	for _, s := range crr.Status.ContainerRecreateStates {
		if s.IsKilled || s.Phase == appsv1beta1.PhaseSucceeded {
			return false
		}
	}
	return true
}

// snapshotID is the container ID crr's status snapshot names for its
// container name, if any.
func snapshotID(crr *appsv1beta1.ContainerRecreateRequest, name string) string {
	for _, cs := range crr.Status.ContainerStatusSnapshot {
		if cs.Name == name {
			return cs.ContainerID
		}
	}
	return ""
}

// unfinished says whether crr has neither completed nor is being deleted.
func unfinished(crr *appsv1beta1.ContainerRecreateRequest) bool {
	return crr.Status.Phase != appsv1beta1.PhaseCompleted && crr.DeletionTimestamp == nil
}
