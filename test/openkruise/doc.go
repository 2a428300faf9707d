// Package openkruise holds OpenKruise's ContainerRecreateRequest CRD, for
// the tests of Rejuv installed beside OpenKruise. make manifests generates
// the CRD with controller-gen from OpenKruise's published API module
// (github.com/openkruise/kruise-api, at the version go.mod requires), so
// that it is the CRD OpenKruise installs: v1alpha1 alone, no conversion.
package openkruise
