package planner

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	apipods "github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// Facts is what the namespace's ContainerRecreateRequests say about
// a policy's pods and its own past recreations.
type Facts struct {
	// InFlight are pods with a request that has not completed, whoever
	// created it.
	InFlight map[types.UID]bool
	// Own are the policy's requests in flight.
	Own int
	// LastRecreated and recreations are, per container, when the policy
	// last asked for its recreation and how often it did.
	LastRecreated map[ContainerKey]time.Time
	Recreations   map[ContainerKey]int
	// LastRule is, per container, the rule whose match made the policy's
	// last request for it; absent when a run made it.
	LastRule map[ContainerKey]string
	// CreatedLastHour counts the policy's requests of the last hour.
	CreatedLastHour int
	// Runs are the policy's requests of each scheduled run, by run time
	// (RFC 3339) and pod UID.
	Runs map[string]map[types.UID]*appsv1beta1.ContainerRecreateRequest
	// failed are the names of the policy's requests of a rule that
	// failed, and of those a pause withdrew: the next request for the
	// same finding or run's pod is a retry, named apart.
	failed map[string]bool
	// CompletedCharges are, by pod name, when the budgets were charged for
	// a policy's request of the namespace that has completed since:
	// entries of the budgets' disruptedPods to take back.
	CompletedCharges map[string]time.Time
	// MadeBy are, by container ID, the requests (whoever made them) whose
	// stop the instance followed: it stopped the container (isKilled) and
	// its snapshot names the instance. A request queued behind another of
	// its pod succeeds on the instance that one made, stopping nothing.
	MadeBy map[string]types.UID
}

// GatherRequests sums up crrs for policy p. The policy's own requests are
// those it controls (its UID), not those that carry its name in the
// rejuv.dev/policy label, which whoever may create a request could set;
// and only a policy's request carries a charge of the budgets.
func GatherRequests(p *v1alpha1.RecreatePolicy, crrs []appsv1beta1.ContainerRecreateRequest, pods map[string]*corev1.Pod, now time.Time) *Facts {
	// Sized (growing them was most of what a pass allocated here): every
	// request may be in flight, and the policy's own name a container
	// each, mostly.
	own := 0
	for i := range crrs {
		if owner := v1alpha1.ControllingPolicy(&crrs[i]); owner != nil && owner.UID == p.UID {
			own++
		}
	}
	f := &Facts{
		InFlight:      make(map[types.UID]bool, len(crrs)),
		LastRecreated: make(map[ContainerKey]time.Time, own),
		Recreations:   make(map[ContainerKey]int, own),
		LastRule:      map[ContainerKey]string{},
		Runs:          map[string]map[types.UID]*appsv1beta1.ContainerRecreateRequest{},
		failed:        map[string]bool{},

		CompletedCharges: map[string]time.Time{},
		MadeBy:           map[string]types.UID{},
	}
	for i := range crrs {
		crr := &crrs[i]
		for _, s := range crr.Status.ContainerRecreateStates {
			if id := snapshotID(crr, s.Name); s.IsKilled && id != "" {
				f.MadeBy[id] = crr.UID
			}
		}
		uid := types.UID(crr.Labels[appsv1beta1.PodUIDLabel])
		if uid == "" {
			if pod := pods[crr.Spec.PodName]; pod != nil {
				uid = pod.UID
			}
		}
		active := crr.Open()
		unseen := !active && uid != "" && recreationUnseen(crr, pods[crr.Spec.PodName], uid)
		if (active || unseen) && uid != "" {
			f.InFlight[uid] = true
		}
		// A budget keeps one entry per pod, the latest charge's: a pod
		// recreated twice within the timeout has two completed requests.
		// A charge is taken back only once the cache shows the recreation.
		owner := v1alpha1.ControllingPolicy(crr)
		if at, ok := ChargedAt(crr); ok && owner != nil && !active && !unseen && now.Sub(at) < DisruptedTimeout && at.After(f.CompletedCharges[crr.Spec.PodName]) {
			f.CompletedCharges[crr.Spec.PodName] = at
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
			f.Own++
		}
		created := crr.CreationTimestamp.Time
		if now.Sub(created) < time.Hour {
			f.CreatedLastHour++
		}
		rule, byRule := strings.CutPrefix(crr.Labels[appsv1beta1.TriggerLabel], string(TriggerRule)+".")
		for _, c := range crr.Spec.Containers {
			key := ContainerKey{Pod: uid, Container: c.Name}
			f.Recreations[key]++
			if last, seen := f.LastRecreated[key]; !seen || created.After(last) {
				f.LastRecreated[key] = created
				delete(f.LastRule, key)
				if byRule {
					f.LastRule[key] = rule
				}
			}
		}
		if byRule && crr.Status.Phase == appsv1beta1.PhaseCompleted && crr.Status.Result == appsv1beta1.ResultFailed {
			f.failed[crr.Name] = true
		}
		if run := crr.Annotations[appsv1beta1.RunAnnotation]; run != "" && uid != "" {
			if f.Runs[run] == nil {
				f.Runs[run] = map[types.UID]*appsv1beta1.ContainerRecreateRequest{}
			}
			f.Runs[run][uid] = crr
		}
	}
	return f
}

// Attempt is the first attempt at c whose request has not failed: the
// policy's requests are named by their attempt (Instance), and a
// rule's finding whose request failed, its containers not recreated, is
// tried again under the next name rather than taken for one in flight; so
// is a run's pod whose request a pause withdrew (another failure of a
// run's request halts the run instead).
func (f *Facts) Attempt(p *v1alpha1.RecreatePolicy, c *PodCandidate) int {
	try := *c
	try.Attempt = 0
	for f.failed[RequestName(p, &try)] {
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

// DisruptedTimeout is how long the disruption controller counts a pod of
// a PodDisruptionBudget's disruptedPods as disrupted.
const DisruptedTimeout = 2 * time.Minute

// ChargedAt reads when a request's budgets were charged.
func ChargedAt(crr *appsv1beta1.ContainerRecreateRequest) (time.Time, bool) {
	v := crr.Annotations[appsv1beta1.DisruptionChargedAnnotation]
	if v == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, v)
	return t, err == nil
}
