// Package bench holds benchmarks that print comparable figures. The
// recreation benchmark runs on the real cluster (test/cluster) with Rejuv
// installed as users install it (test/deploy) and compares Rejuv's latency with the
// kubelet's own restart latency measured in the same run:
//
//	make bench-cluster
package bench
