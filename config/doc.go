// Package config holds Rejuv's Kubernetes manifests; its Go side embeds the
// generated webhook configurations so that the manager can register its
// webhooks by URL when it runs outside the cluster (tests, a local cluster).
package config
