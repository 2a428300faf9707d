// Package apps installs both versions of the apps.kruise.io API that Rejuv
// serves (ContainerRecreateRequest v1alpha1 and v1beta1) into a scheme; the
// types and their conversion live in the version packages.
package apps
