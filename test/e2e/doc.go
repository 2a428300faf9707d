// Package e2e holds Rejuv's end-to-end tests. They run on the real
// single-node cluster from test/cluster (kubelet, containerd, runc), which
// TestMain starts or reuses, against Rejuv installed as users install it
// (package test/deploy: its images, config/default, its service accounts),
// with test workloads built by test/images. Package install, below, tests
// the install paths themselves.
package e2e
