// Package daemon owns the node daemon: finding and talking to the container
// runtime over the CRI and executing the ContainerRecreateRequests of its own
// node. It makes no decisions about when to recreate; the healer does.
package daemon
