// Package images owns the container images of Rejuv's test clusters: it builds
// the pause and testapp programs into deterministic single-layer images and
// writes them as docker-save tarballs for `ctr -n k8s.io images import`.
package images
