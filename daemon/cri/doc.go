// Package cri owns the daemon's connection to the container runtime: finding
// its CRI socket (a flag, or the well-known containerd, CRI-O and cri-dockerd
// paths under the host's run directory), checking it with the CRI Version
// call, and a client whose every call is timed in a metric. It decides
// nothing about which containers to stop.
package cri
