// Package v1alpha1 holds the RecreatePolicy API of group rejuv.dev, version
// v1alpha1: the spec operators write, the status the policy controller
// reports, and the condition types and reasons it uses.
// +kubebuilder:object:generate=true
// +groupName=rejuv.dev
package v1alpha1
