package crr

import "github.com/rejuv-dev/rejuv/api/apps/v1beta1"

// Labels that say who asked for a request.
const (
	// PolicyLabel names the RecreatePolicy that created the request.
	PolicyLabel = "rejuv.dev/policy"
	// SourceLabel names the tool that created the request, e.g. kubectl.
	SourceLabel = "rejuv.dev/source"
)

// Sources of requests, as metrics label them.
const (
	SourcePolicy  = "policy"
	SourceKubectl = "kubectl"
	SourceManual  = "manual"
)

// sourceOf says who asked for crr: a policy, the kubectl plugin, or anyone
// else. Only known values are returned: labels are user input and metric
// label values must stay few.
func sourceOf(crr *v1beta1.ContainerRecreateRequest) string {
	switch {
	case crr.Labels[PolicyLabel] != "":
		return SourcePolicy
	case crr.Labels[SourceLabel] == SourceKubectl:
		return SourceKubectl
	default:
		return SourceManual
	}
}
