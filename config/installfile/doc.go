// Package installfile builds a single install file from one of config/'s
// kustomizations (config/default, config/openkruise) as kubectl apply -k
// would apply it, with Rejuv's images renamed into a registry and, for a
// release, pinned by digest: what kustomize's images: override does.
package installfile
