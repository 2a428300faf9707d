//go:build tools

// Package runtimebuild pins the container runtime the test cluster's node
// runs when it is built from Go modules (REJUV_RUNTIME=containerd2):
// containerd, its runc shim and ctr. The harness builds them with go build
// in this module.
package runtimebuild

import (
	_ "github.com/containerd/containerd/v2/cmd/containerd"
	_ "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2"
	_ "github.com/containerd/containerd/v2/cmd/ctr"
)
