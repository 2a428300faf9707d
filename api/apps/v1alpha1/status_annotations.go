package v1alpha1

import "github.com/rejuv-dev/rejuv/api/apps/v1beta1"

// StatusAnnotations returns the annotations that carry, in v1alpha1, the
// part of v1beta1's status that v1alpha1 has no field for. They are
// status, not metadata: ConvertFrom writes them from the status alone and
// ConvertTo reads them back into it. The API server keeps a v1alpha1
// object's status as it was on a create or an update of the main
// resource, but not its annotations, and converts the object to v1beta1 to
// store it; so a v1alpha1 write that set them would write the stored
// status past the status subresource and the admission policy on it. The
// status-annotations admission policy (config/admission) refuses such a
// write; its list is this one (a test of config/ checks it).
func StatusAnnotations() []string {
	return []string{
		v1beta1.SyncContainerStatusesAnnotation,
		v1beta1.UnreadyAcquiredAnnotation,
		ConditionsAnnotation,
		v1beta1.PreStopStartedAnnotation,
		v1beta1.ResultAnnotation,
	}
}
