// Package scale measures the manager, as installed, in a cluster of many
// pods: kwok (test/cluster/harness, StartKwok) plays the kubelets of
// simulated nodes beside the real node, the benchmark fills them with
// Deployments of ordinary pods in many namespaces, one RecreatePolicy per
// namespace, and prints what the manager costs at each size:
//
//	make bench-scale
//
// REJUV_SCALE_NODES (default 1000), REJUV_SCALE_SIZES (default
// 1000,3000,10000) and REJUV_SCALE_NAMESPACES (default 100) size it.
package scale
