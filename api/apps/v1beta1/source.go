package v1beta1

// Sources of requests, as metrics and the kubectl plugin label them.
const (
	SourcePolicy  = "policy"
	SourceKubectl = "kubectl"
	SourceManual  = "manual"
)

// SourceOf says who asked for crr: the kubectl plugin (a pod's request, or
// the rolling restart of a workload, whose policy carries the plugin's
// label onto its requests), another policy, or anyone else. Only known
// values are returned: labels are user input and metric label values must
// stay few.
func SourceOf(crr *ContainerRecreateRequest) string {
	switch {
	case crr.Labels[SourceLabel] == SourceKubectl:
		return SourceKubectl
	case crr.Labels[PolicyLabel] != "":
		return SourcePolicy
	default:
		return SourceManual
	}
}
