// Package v1alpha1 holds the ContainerRecreateRequest API of group
// apps.kruise.io, version v1alpha1, as OpenKruise serves it. It converts to
// and from the hub, v1beta1, without loss: the hub's status snapshot and
// conditions travel in the annotations OpenKruise uses for them.
// +kubebuilder:object:generate=true
// +groupName=apps.kruise.io
package v1alpha1
