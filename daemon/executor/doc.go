// Package executor owns the daemon's execution of ContainerRecreateRequests
// on its own node: one request per pod at a time, oldest first; for each
// container the preStop hook, the stop through the CRI, and the wait for the
// kubelet's new container. It keeps all progress in the request's status so
// that a restarted daemon resumes without stopping a container twice.
package executor
