// Package healer owns the manager: the policy controller, the planner and its
// safety gates, the CRR controller, the admission webhooks and the signal
// providers. It never talks to a container runtime; the daemon does.
package healer
