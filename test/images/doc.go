// Package images owns the container images of Rejuv's test clusters: it builds
// the pause and testapp programs (and Rejuv's own) into deterministic
// single-layer images, writes them as archives for `ctr -n k8s.io images
// import` and pushes them to a registry when asked.
package images
