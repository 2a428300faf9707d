// Package podcache keeps every pod of the cluster in the manager's cache
// in a compact form, and gives it back as a corev1.Pod to every reader
// and event handler: a pod is kept as what pods.Trim keeps of it, with
// the values the pods of one template hold alike (spec, labels, owners,
// conditions, images) kept once, and its own values (timestamps,
// container IDs) packed. The manager's readers of pods are unchanged;
// each read builds the pod from what is kept.
package podcache
