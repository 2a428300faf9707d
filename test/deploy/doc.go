// Package deploy runs Rejuv on the test cluster the way a user runs it
// outside the cluster: the CRD applied, rejuv-healer with its webhooks
// registered by URL, and rejuv-daemon for the node, as processes built from
// this checkout. End-to-end tests and benchmarks share it.
package deploy
