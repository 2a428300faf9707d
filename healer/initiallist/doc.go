// Package initiallist keeps a controller's watch of another kind from
// mapping the objects its informer held when the watch began.
//
// A controller's watch is given every object its informer holds as
// created before the controller's workers start: at a takeover, the new
// leader's pod watches would map each of the cluster's pods to the
// policies or requests it concerns, while the controller's own kind
// enqueues every policy and request at its start anyway.
package initiallist
