// Package pods answers the questions Rejuv's parts ask of a pod: a
// container's status, whether a container is a native sidecar, whether
// the kubelet would start a container again once Rejuv stops it, its
// conditions and the readiness gate through which a request takes it out
// of service. One home for each, so that the daemon, the manager, the
// plugin and the rules agree.
package pods
