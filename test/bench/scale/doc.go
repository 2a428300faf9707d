// Package scale measures the manager, as installed, in a cluster of many
// pods: kwok (test/cluster/harness, StartKwok) plays the kubelets of
// simulated nodes beside the real node, the benchmark fills them with
// Deployments of ordinary pods in many namespaces, one RecreatePolicy per
// namespace, and prints at each size what the manager costs (memory, API
// requests) and how it acts: the time from a pod's readiness change to its
// request while pods churn, and a rolling restart of 1,000 pods against
// its floor and its maxUnavailable; and the policy engine's pass over a
// memory policy when every memory window moved, over the fleet's pods,
// against OPA's prepared query in the same run (test/bench/engine's
// measures). A stand-in executor carries out the
// requests of simulated pods, with restarts as long as those timed on the
// real node first; docs/benchmarks.md ("make bench-scale") has the method
// and the figures.
//
//	make bench-scale
//
// REJUV_SCALE_NODES (default 1000), REJUV_SCALE_SIZES (default
// 1000,3000,10000) and REJUV_SCALE_NAMESPACES (default 100) size it;
// REJUV_SCALE_SETTLE (default 90s) is how long each size runs before it is
// measured. It fails when a manager container restarted (OOMKilled at its
// limit), when a rolling restart had more requests in progress than its
// maxUnavailable, or when the stand-in could not carry a request out. make
// test runs it small (100 nodes, 1,000 pods in 10 namespaces, 30s).
package scale
