package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ControllingPolicy returns obj's controller reference when it names a
// RecreatePolicy, nil otherwise. Only the manager may set such a reference
// on a ContainerRecreateRequest (the request-ownership admission policy),
// so its UID, unlike the rejuv.dev/policy label alone, says which policy
// created the request.
func ControllingPolicy(obj metav1.Object) *metav1.OwnerReference {
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.Kind != "RecreatePolicy" || ref.APIVersion != GroupVersion.String() {
		return nil
	}
	return ref
}
