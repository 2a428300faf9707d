package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is rejuv.dev/v1alpha1.
	GroupVersion = schema.GroupVersion{Group: "rejuv.dev", Version: "v1alpha1"}

	// SchemeBuilder registers this version's types with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds this version's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &RecreatePolicy{}, &RecreatePolicyList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
