package recreatepolicy

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/rejuv-dev/rejuv/api/apps/v1alpha1"
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
	// deciding serializes the decisions of the namespace's policies;
	// users counts who holds or waits for it.
	deciding sync.Mutex
	users    int
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

// The requests the controller created that its cache may not hold yet are
// expected per namespace, as the workload controllers keep theirs: the
// next pass of any policy of the namespace counts them as if listed, so
// that no limit (maxUnavailable, maxPerHour, the disruption budgets, in
// flight) is computed without them.

// expectationTTL is how long a created request is counted while the cache
// does not show it; the cache catches up within seconds, and a request
// deleted before it did stops counting then.
const expectationTTL = time.Minute

// expected is a request created at the time created.
type expected struct {
	crr     appsv1beta1.ContainerRecreateRequest
	created time.Time
}

// created records a request a policy just created.
func (s *state) created(crr *appsv1beta1.ContainerRecreateRequest, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.namespace(crr.Namespace).expected[crr.Name] = expected{crr: *crr.DeepCopy(), created: now}
}

// withExpected adds to listed, the namespace's requests, those the
// policies created that the cache does not show yet, and forgets those it
// shows and those expected for too long.
func (s *state) withExpected(namespace string, listed []appsv1beta1.ContainerRecreateRequest, now time.Time) []appsv1beta1.ContainerRecreateRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	ns := s.namespaces[namespace]
	if ns == nil || len(ns.expected) == 0 {
		return listed
	}
	seen := make(map[string]bool, len(listed))
	for i := range listed {
		seen[listed[i].Name] = true
	}
	for name, x := range ns.expected {
		switch {
		case seen[name] || now.Sub(x.created) > expectationTTL:
			delete(ns.expected, name)
		default:
			listed = append(listed, *x.crr.DeepCopy())
		}
	}
	s.tidy(namespace)
	return listed
}

// The budget charges of requests deleted before they completed (by hand,
// or by the garbage collector after their policy) are entries of the
// budgets' disruptedPods that no completion will take back: the state
// keeps them per namespace until its next pass takes them back. They are
// kept in memory: after a manager restart, the disruption controller's
// two-minute timeout takes such an entry back instead.

// requestDeleted records the charge of a deleted request that had not
// completed. o is a request in either version.
func (s *state) requestDeleted(o client.Object) {
	crr, ok := o.(*appsv1beta1.ContainerRecreateRequest)
	if old, isOld := o.(*appsv1alpha1.ContainerRecreateRequest); isOld {
		crr, ok = &appsv1beta1.ContainerRecreateRequest{}, old.ConvertTo(crr) == nil
	}
	if !ok || crr.Status.Phase == appsv1beta1.PhaseCompleted {
		return
	}
	at, charged := planner.ChargedAt(crr)
	if !charged {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.namespace(crr.Namespace).dropped[crr.Spec.PodName] = at
}

// takeDropped returns the namespace's dropped charges and forgets them.
func (s *state) takeDropped(namespace string) map[string]time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	ns := s.namespaces[namespace]
	if ns == nil || len(ns.dropped) == 0 {
		return nil
	}
	out := ns.dropped
	ns.dropped = map[string]time.Time{}
	s.tidy(namespace)
	return out
}

// lockDecisions serializes the decisions of the policies of one namespace:
// with several workers, two policies selecting the same pods would
// otherwise each count the budgets without the requests the other is
// creating. Rules are evaluated outside the lock; only the pass from
// reading the requests to creating new ones holds it. It returns the
// release, which may be called more than once.
func (s *state) lockDecisions(namespace string) func() {
	s.mu.Lock()
	ns := s.namespace(namespace)
	ns.users++
	s.mu.Unlock()
	ns.deciding.Lock()
	return sync.OnceFunc(func() {
		ns.deciding.Unlock()
		s.mu.Lock()
		ns.users--
		s.tidy(namespace)
		s.mu.Unlock()
	})
}

// startNamespacePass counts a pass over a policy of the namespace, unless its
// policies have limit passes in flight already (ok is false): one
// namespace's policies, however many and however slow, then hold at most
// limit of the workers, and the others stay free for other namespaces. It
// returns the end of the pass.
func (s *state) startNamespacePass(namespace string, limit int) (end func(), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ns := s.namespace(namespace)
	if ns.passes >= limit {
		s.tidy(namespace)
		return nil, false
	}
	ns.passes++
	return sync.OnceFunc(func() {
		s.mu.Lock()
		ns.passes--
		s.tidy(namespace)
		s.mu.Unlock()
	}), true
}

// A pass over a policy's rules in flight is cancelled when its policy is
// deleted or changed meanwhile, so that its rules stop at their next step
// rather than at the end of the pass.

// startPass returns the context of a pass over the policy's rules at
// generation, and the function that ends it.
func (s *state) startPass(ctx context.Context, uid types.UID, generation int64) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	p := &pass{generation: generation, cancel: cancel}
	s.mu.Lock()
	if s.passes == nil {
		s.passes = map[types.UID]*pass{}
	}
	s.passes[uid] = p
	s.mu.Unlock()
	return ctx, func() {
		cancel()
		s.mu.Lock()
		if s.passes[uid] == p {
			delete(s.passes, uid)
		}
		s.mu.Unlock()
	}
}

// outdated cancels the pass of the policy uid unless it is at generation
// (a deleted policy's is cancelled with generation 0).
func (s *state) outdated(uid types.UID, generation int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.passes[uid]; ok && p.generation != generation {
		p.cancel()
	}
}
