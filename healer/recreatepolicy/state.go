package recreatepolicy

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/planner"
)

// state is what the controller remembers between passes, in this process
// only: a restarted manager or a new leader starts afresh (each part says
// what that costs). One mutex guards it all; forget drops all of a deleted
// policy.
type state struct {
	mu sync.Mutex
	// policies are per policy: its containers' history, its holds, its
	// last status write.
	policies map[types.NamespacedName]*policyState
	// namespaces are per namespace: the requests the cache may not show
	// yet, the charges of deleted requests, the lock of its decisions.
	namespaces map[string]*namespaceState
	// passes are the passes over policies' rules in flight, and
	// interrupted the policies the journal quarantined, by policy UID.
	passes      map[types.UID]*pass
	interrupted map[types.UID]interruption
}

// policyState is what the controller remembers of one policy.
type policyState struct {
	history history
	holds   planner.Holds
	// written is the resourceVersion its last status write returned.
	written string
	// unwritten is the status its last pass could not write, with the
	// policy's UID; nil once a write went through. Its passes start from
	// it rather than from the status read (see carryUnwritten).
	unwritten *v1alpha1.RecreatePolicy
}

// namespaceState is what the controller remembers of one namespace; it
// lives while it holds something, someone holds or waits for its lock, or
// a pass over one of its policies is in flight.
type namespaceState struct {
	// passes counts the passes over its policies in flight, bounded by
	// the Reconciler's passesPerNamespace.
	passes int
	// decisions serializes the decisions of the namespace's policies;
	// users counts who holds or waits for it.
	decisions sync.Mutex
	users     int
	// expected are the requests created that the cache may not show
	// yet, by name.
	expected map[string]expected
	// dropped are the charges of requests deleted before they completed,
	// by pod name.
	dropped map[string]time.Time
}

// pass is a pass over a policy's rules in flight.
type pass struct {
	generation int64
	cancel     context.CancelFunc
}

// interruption is a policy generation the journal quarantined, and the
// message of its Halted condition.
type interruption struct {
	generation int64
	message    string
}

// policy returns the policy's state, made on first use; the caller holds
// s.mu.
func (s *state) policy(key types.NamespacedName) *policyState {
	if s.policies == nil {
		s.policies = map[types.NamespacedName]*policyState{}
	}
	ps := s.policies[key]
	if ps == nil {
		ps = &policyState{holds: planner.Holds{}}
		s.policies[key] = ps
	}
	return ps
}

// namespace returns the namespace's state, made on first use; the caller
// holds s.mu and calls tidy once done with it.
func (s *state) namespace(name string) *namespaceState {
	if s.namespaces == nil {
		s.namespaces = map[string]*namespaceState{}
	}
	ns := s.namespaces[name]
	if ns == nil {
		ns = &namespaceState{expected: map[string]expected{}, dropped: map[string]time.Time{}}
		s.namespaces[name] = ns
	}
	return ns
}

// tidy drops the namespace's state once it holds nothing, nobody uses its
// lock and no pass is in flight; the caller holds s.mu.
func (s *state) tidy(name string) {
	if ns := s.namespaces[name]; ns != nil && ns.users == 0 && ns.passes == 0 && len(ns.expected) == 0 && len(ns.dropped) == 0 {
		delete(s.namespaces, name)
	}
}

// history is the policy's memory of its containers, kept to the pods
// keep names.
func (s *state) history(key types.NamespacedName, keep map[types.UID]bool) *history {
	s.mu.Lock()
	h := &s.policy(key).history
	s.mu.Unlock()
	h.forget(keep)
	return h
}

// updateHolds takes one pass's decisions into the policy's holds and
// returns the holds that ended (see planner.Holds.Update).
func (s *state) updateHolds(key types.NamespacedName, decided []v1alpha1.Decision, kindDecided func(planner.TriggerKind) bool, now time.Time) []planner.EndedHold {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.policy(key).holds.Update(decided, kindDecided, now)
}

// heldBy is the gate that held a policy's candidate back at its last
// pass, "" for none.
func (s *state) heldBy(key types.NamespacedName, pod string, kind planner.TriggerKind) v1alpha1.DecisionOutcome {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ps := s.policies[key]; ps != nil {
		return ps.holds.HeldBy(pod, kind)
	}
	return ""
}

// lastWrite is the resourceVersion the policy's last status write
// returned, "" for none.
func (s *state) lastWrite(key types.NamespacedName) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ps := s.policies[key]; ps != nil {
		return ps.written
	}
	return ""
}

// wrote records the resourceVersion the policy's status write returned;
// no status of it is left unwritten.
func (s *state) wrote(p *v1alpha1.RecreatePolicy) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps := s.policy(types.NamespacedName{Namespace: p.Namespace, Name: p.Name})
	ps.written, ps.unwritten = p.ResourceVersion, nil
}

// notWritten records the status of p that could not be written.
func (s *state) notWritten(p *v1alpha1.RecreatePolicy) {
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := &v1alpha1.RecreatePolicy{ObjectMeta: metav1.ObjectMeta{UID: p.UID}}
	p.Status.DeepCopyInto(&kept.Status)
	s.policy(types.NamespacedName{Namespace: p.Namespace, Name: p.Name}).unwritten = kept
}

// unwritten returns a copy of the status of p that its last pass could
// not write, if any.
func (s *state) unwritten(p *v1alpha1.RecreatePolicy) (*v1alpha1.RecreatePolicyStatus, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps := s.policies[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}]
	if ps == nil || ps.unwritten == nil || ps.unwritten.UID != p.UID {
		return nil, false
	}
	return ps.unwritten.Status.DeepCopy(), true
}

// forget drops what is remembered of a deleted policy: its own state and
// the requests it was expected to have created. (A pass of it in flight
// was cancelled when it was deleted; its namespace's dropped charges are
// taken back by the caller, which has a client.)
func (s *state) forget(key types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.policies, key)
	if ns := s.namespaces[key.Namespace]; ns != nil {
		for name, x := range ns.expected {
			if x.crr.Labels[appsv1beta1.PolicyLabel] == key.Name {
				delete(ns.expected, name)
			}
		}
		s.tidy(key.Namespace)
	}
}

// interruption returns the quarantine the journal put on the policy UID.
func (s *state) interruption(uid types.UID) (interruption, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.interrupted[uid]
	return i, ok
}

// interrupt records a quarantine the journal put on the policy UID.
func (s *state) interrupt(uid types.UID, i interruption) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.interrupted == nil {
		s.interrupted = map[types.UID]interruption{}
	}
	s.interrupted[uid] = i
}
