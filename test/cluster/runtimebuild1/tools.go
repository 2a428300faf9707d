//go:build tools

// Package runtimebuild1 pins the containerd 1.7 the test cluster's nodes
// run with the oldest Kubernetes Rejuv supports (REJUV_RUNTIME=containerd1):
// containerd, its runc shim and ctr. The harness builds them with go build
// in this module.
package runtimebuild1

import (
	_ "github.com/containerd/containerd/cmd/containerd"
	_ "github.com/containerd/containerd/cmd/containerd-shim-runc-v2"
	_ "github.com/containerd/containerd/cmd/ctr"
)
