package recreatepolicy

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// expectationTTL is how long a created request is counted while the cache
// does not show it; the cache catches up within seconds, and a request
// deleted before it did stops counting then.
const expectationTTL = time.Minute

// expectations are the requests the controller created that its cache may
// not hold yet, per namespace, as the workload controllers keep theirs: the
// next pass of any policy of the namespace counts them as if listed, so
// that no limit (maxUnavailable, maxPerHour, the disruption budgets, in
// flight) is computed without them.
type expectations struct {
	mu          sync.Mutex
	byNamespace map[string]map[string]expected
}

type expected struct {
	crr     appsv1beta1.ContainerRecreateRequest
	created time.Time
}

// created records a request a policy just created.
func (e *expectations) created(crr *appsv1beta1.ContainerRecreateRequest, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.byNamespace == nil {
		e.byNamespace = map[string]map[string]expected{}
	}
	if e.byNamespace[crr.Namespace] == nil {
		e.byNamespace[crr.Namespace] = map[string]expected{}
	}
	e.byNamespace[crr.Namespace][crr.Name] = expected{crr: *crr.DeepCopy(), created: now}
}

// merge adds to listed, the namespace's requests, those the policies
// created that the cache does not show yet, and forgets those it shows and
// those expected for too long.
func (e *expectations) merge(namespace string, listed []appsv1beta1.ContainerRecreateRequest, now time.Time) []appsv1beta1.ContainerRecreateRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	pending := e.byNamespace[namespace]
	if len(pending) == 0 {
		return listed
	}
	seen := make(map[string]bool, len(listed))
	for i := range listed {
		seen[listed[i].Name] = true
	}
	for name, x := range pending {
		switch {
		case seen[name] || now.Sub(x.created) > expectationTTL:
			delete(pending, name)
		default:
			listed = append(listed, *x.crr.DeepCopy())
		}
	}
	if len(pending) == 0 {
		delete(e.byNamespace, namespace)
	}
	return listed
}

// forget drops a deleted policy's expectations.
func (e *expectations) forget(policy types.NamespacedName) {
	e.mu.Lock()
	defer e.mu.Unlock()
	pending := e.byNamespace[policy.Namespace]
	for name, x := range pending {
		if x.crr.Labels[appsv1beta1.PolicyLabel] == policy.Name {
			delete(pending, name)
		}
	}
	if len(pending) == 0 {
		delete(e.byNamespace, policy.Namespace)
	}
}
