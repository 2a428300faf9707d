package crr

import (
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// daemonProgress is the part of a request's status only a daemon writes
// while the request runs: a change to it says a daemon is at work on it.
type daemonProgress struct {
	uid       types.UID
	phase     v1beta1.ContainerRecreateRequestPhase
	states    []v1beta1.ContainerRecreateRequestContainerRecreateState
	snapshot  []v1beta1.ContainerRecreateRequestSyncContainerStatus
	changedAt time.Time
}

func progressOf(crr *v1beta1.ContainerRecreateRequest) daemonProgress {
	st := crr.Status.DeepCopy()
	return daemonProgress{uid: crr.UID, phase: st.Phase, states: st.ContainerRecreateStates, snapshot: st.ContainerStatusSnapshot}
}

func (p daemonProgress) same(o daemonProgress) bool {
	return p.uid == o.uid && p.phase == o.phase && equality.Semantic.DeepEqual(p.states, o.states) &&
		equality.Semantic.DeepEqual(p.snapshot, o.snapshot)
}

// noteDaemon records, on the manager's clock, when the daemon's part of
// the request's status was last seen to change. A begun request seen for
// the first time (a new leader) counts as changed now.
func (r *Reconciler) noteDaemon(crr *v1beta1.ContainerRecreateRequest, now time.Time) {
	key := types.NamespacedName{Namespace: crr.Namespace, Name: crr.Name}
	seen := progressOf(crr)
	r.mu.Lock()
	defer r.mu.Unlock()
	last, ok := r.daemonSeen[key]
	switch {
	case ok && last.same(seen):
		return
	case ok || begun(crr):
		seen.changedAt = now
	}
	r.daemonSeen[key] = seen
}

// daemonAlive says how much longer a daemon that wrote to the request is
// taken to be at work on it: NodeLostGrace after its last write. A node
// whose Ready condition says it is lost may have a daemon still at work
// (its kubelet silent, or back and not yet reporting): that daemon may have
// stopped containers the kubelet will start again, so the request is not
// ended for the node while the daemon writes.
func (r *Reconciler) daemonAlive(crr *v1beta1.ContainerRecreateRequest, now time.Time) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen, ok := r.daemonSeen[types.NamespacedName{Namespace: crr.Namespace, Name: crr.Name}]
	if !ok || seen.changedAt.IsZero() {
		return 0
	}
	return max(seen.changedAt.Add(r.NodeLostGrace).Sub(now), 0)
}

// forgetDaemon drops what noteDaemon remembers of a request that is
// complete or gone.
func (r *Reconciler) forgetDaemon(key types.NamespacedName) {
	r.mu.Lock()
	delete(r.daemonSeen, key)
	r.mu.Unlock()
}
