// Package harness builds, starts and stops a real single-node Kubernetes
// cluster on this machine (etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler, containerd with runc and a bridge CNI, kubelet) for Rejuv's
// integration and end-to-end tests, and starts envtest on the same binaries.
// It changes the host only in ways it records and undoes in Down.
package harness
