// Package crr owns the manager's side of ContainerRecreateRequests: it ends
// requests the daemon cannot finish (deadline passed, pod gone or replaced,
// node lost), makes a missing daemon visible, holds the pod not ready for the
// unready grace period, and tidies up completed requests (active label,
// events, metrics, TTL). It never stops a container; the daemon does.
package crr
