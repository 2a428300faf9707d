// Package v1beta1 holds the ContainerRecreateRequest API of group
// apps.kruise.io, version v1beta1: the hub of conversion and the storage
// version. It is wire-compatible with OpenKruise's and adds the status
// snapshot and conditions that v1alpha1 carries as annotations.
// +kubebuilder:object:generate=true
// +groupName=apps.kruise.io
package v1beta1
