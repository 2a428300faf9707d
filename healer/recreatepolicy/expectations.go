package recreatepolicy

import (
	"time"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

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
