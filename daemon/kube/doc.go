// Package kube is the daemon's Kubernetes client, built on client-go's REST
// client, informers and work queue with a scheme of only the types the
// daemon reads and writes: pods, ContainerRecreateRequests, events and the
// metrics endpoint's token and access reviews. It avoids controller-runtime
// and client-go's clientset, whose every API group's types, registered at
// start, cost a node daemon more memory than all its own work.
package kube
