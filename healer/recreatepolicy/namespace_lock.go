package recreatepolicy

import "sync"

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
	ns.decisions.Lock()
	return sync.OnceFunc(func() {
		ns.decisions.Unlock()
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
