// Package deploy installs Rejuv on the test cluster as users install it:
// its images built and loaded onto the node, its manifests (config/default,
// through test/deploy/overlay) applied with kubectl, its shipped service
// accounts and roles. End-to-end tests, benchmarks and the demo share it,
// with helpers that look at the installed stack as an operator would: pod
// logs, the leader, metrics through the shipped reader role.
package deploy
