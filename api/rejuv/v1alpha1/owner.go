package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// policyAPIVersion is the apiVersion a RecreatePolicy's owner reference
// names, computed once: a pass asks for every request's controller.
var policyAPIVersion = GroupVersion.String()

// ControllingPolicy returns obj's controller reference when it names a
// RecreatePolicy, nil otherwise. Only the manager may set such a reference
// on a ContainerRecreateRequest (the request-ownership admission policy),
// so its UID, unlike the rejuv.dev/policy label alone, says which policy
// created the request. The reference is obj's own, not a copy: it is only
// read.
func ControllingPolicy(obj metav1.Object) *metav1.OwnerReference {
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil || ref.Kind != "RecreatePolicy" || ref.APIVersion != policyAPIVersion {
		return nil
	}
	return ref
}
