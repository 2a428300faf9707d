package recreatepolicy

import "time"

// Passes over the policies of one namespace hold at most half of the
// workers (at least one): many policies of one namespace, each of whose
// passes spends up to the evaluation budget, would otherwise hold every
// worker, and every other namespace's policies would wait for them. A
// pass beyond the namespace's share is put off by namespaceBusyRetry,
// taking no worker meanwhile, and counted in
// rejuv_policy_passes_deferred_total.

// namespaceBusyRetry is how long a pass beyond its namespace's share is
// put off.
const namespaceBusyRetry = 2 * time.Second

// passesPerNamespace is how many passes over one namespace's policies may
// be in flight at once.
func (r *Reconciler) passesPerNamespace() int {
	return max(1, r.Workers/2)
}
