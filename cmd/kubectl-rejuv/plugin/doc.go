// Package plugin is the command tree of kubectl rejuv: restart containers
// in place (a pod, or a workload in rolling batches), create requests as
// kubectl-kruise does, show what is being recreated and why, and test
// policies before they are applied.
package plugin
