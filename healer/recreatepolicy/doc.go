// Package recreatepolicy is the policy controller: it selects each
// RecreatePolicy's pods, fires its schedule and evaluates its rules, passes
// every candidate through the planner's gates, creates the requests that
// get through, and reports what it decided in the policy's status, events
// and metrics. It never stops a container itself.
package recreatepolicy
