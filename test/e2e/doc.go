// Package e2e holds Rejuv's end-to-end tests. They run on the real
// single-node cluster from test/cluster (kubelet, containerd, runc), which
// TestMain starts or reuses, with images built by test/images.
package e2e
