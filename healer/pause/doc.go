// Package pause reads Rejuv's emergency stop: the ConfigMap
// v1alpha1.PauseConfigMap in the manager's namespace, which pauses every
// recreation cluster-wide while it exists. It owns how the ConfigMap is
// read, what a bad value means (still paused: a stop must not fail
// open) and the message every part quotes; the gates, the request
// controller and the webhook decide what a pause does to them. Its
// clients' side is here too: how the stop is written (Write), when the
// manager has confirmed it (Observed) and what is still under way
// (ReadUnderWay), for kubectl rejuv pause and the uninstall's preparation.
//
// Shared with the kubectl plugin on purpose: kubectl rejuv pause writes and
// watches the stop through it.
package pause
