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
