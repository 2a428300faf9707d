package v1alpha1

import (
	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// The spec and the per-container status are the same in both versions;
// these copy them field by field (deep), so that the compiler flags a field
// added to one version and not the other.

func specToHub(in ContainerRecreateRequestSpec) v1beta1.ContainerRecreateRequestSpec {
	out := v1beta1.ContainerRecreateRequestSpec{
		PodName:                 in.PodName,
		ActiveDeadlineSeconds:   copyPtr(in.ActiveDeadlineSeconds),
		TTLSecondsAfterFinished: copyPtr(in.TTLSecondsAfterFinished),
	}
	if in.Containers != nil {
		out.Containers = make([]v1beta1.ContainerRecreateRequestContainer, len(in.Containers))
		for i, c := range in.Containers {
			c = *c.DeepCopy()
			out.Containers[i] = v1beta1.ContainerRecreateRequestContainer{Name: c.Name, Ports: c.Ports}
			if c.PreStop != nil {
				out.Containers[i].PreStop = &v1beta1.ProbeHandler{Exec: c.PreStop.Exec, HTTPGet: c.PreStop.HTTPGet, TCPSocket: c.PreStop.TCPSocket, Sleep: c.PreStop.Sleep}
			}
			if c.StatusContext != nil {
				out.Containers[i].StatusContext = &v1beta1.ContainerRecreateRequestContainerContext{ContainerID: c.StatusContext.ContainerID, RestartCount: c.StatusContext.RestartCount}
			}
		}
	}
	if s := in.Strategy; s != nil {
		out.Strategy = &v1beta1.ContainerRecreateRequestStrategy{
			FailurePolicy:                 v1beta1.ContainerRecreateRequestFailurePolicyType(s.FailurePolicy),
			OrderedRecreate:               s.OrderedRecreate,
			ForceRecreate:                 s.ForceRecreate,
			TerminationGracePeriodSeconds: copyPtr(s.TerminationGracePeriodSeconds),
			UnreadyGracePeriodSeconds:     copyPtr(s.UnreadyGracePeriodSeconds),
			MinStartedSeconds:             s.MinStartedSeconds,
		}
	}
	return out
}

func specFromHub(in v1beta1.ContainerRecreateRequestSpec) ContainerRecreateRequestSpec {
	out := ContainerRecreateRequestSpec{
		PodName:                 in.PodName,
		ActiveDeadlineSeconds:   copyPtr(in.ActiveDeadlineSeconds),
		TTLSecondsAfterFinished: copyPtr(in.TTLSecondsAfterFinished),
	}
	if in.Containers != nil {
		out.Containers = make([]ContainerRecreateRequestContainer, len(in.Containers))
		for i, c := range in.Containers {
			c = *c.DeepCopy()
			out.Containers[i] = ContainerRecreateRequestContainer{Name: c.Name, Ports: c.Ports}
			if c.PreStop != nil {
				out.Containers[i].PreStop = &ProbeHandler{Exec: c.PreStop.Exec, HTTPGet: c.PreStop.HTTPGet, TCPSocket: c.PreStop.TCPSocket, Sleep: c.PreStop.Sleep}
			}
			if c.StatusContext != nil {
				out.Containers[i].StatusContext = &ContainerRecreateRequestContainerContext{ContainerID: c.StatusContext.ContainerID, RestartCount: c.StatusContext.RestartCount}
			}
		}
	}
	if s := in.Strategy; s != nil {
		out.Strategy = &ContainerRecreateRequestStrategy{
			FailurePolicy:                 ContainerRecreateRequestFailurePolicyType(s.FailurePolicy),
			OrderedRecreate:               s.OrderedRecreate,
			ForceRecreate:                 s.ForceRecreate,
			TerminationGracePeriodSeconds: copyPtr(s.TerminationGracePeriodSeconds),
			UnreadyGracePeriodSeconds:     copyPtr(s.UnreadyGracePeriodSeconds),
			MinStartedSeconds:             s.MinStartedSeconds,
		}
	}
	return out
}

// statusToHub copies what both versions have; the hub-only fields come
// from annotations (see ConvertTo).
func statusToHub(in ContainerRecreateRequestStatus) v1beta1.ContainerRecreateRequestStatus {
	out := v1beta1.ContainerRecreateRequestStatus{
		Phase:   v1beta1.ContainerRecreateRequestPhase(in.Phase),
		Message: in.Message,
	}
	if in.CompletionTime != nil {
		out.CompletionTime = in.CompletionTime.DeepCopy()
	}
	if in.ContainerRecreateStates != nil {
		out.ContainerRecreateStates = make([]v1beta1.ContainerRecreateRequestContainerRecreateState, len(in.ContainerRecreateStates))
		for i, s := range in.ContainerRecreateStates {
			out.ContainerRecreateStates[i] = v1beta1.ContainerRecreateRequestContainerRecreateState{
				Name: s.Name, Phase: v1beta1.ContainerRecreateRequestPhase(s.Phase), Message: s.Message, IsKilled: s.IsKilled,
			}
		}
	}
	return out
}

func statusFromHub(in v1beta1.ContainerRecreateRequestStatus) ContainerRecreateRequestStatus {
	out := ContainerRecreateRequestStatus{
		Phase:   ContainerRecreateRequestPhase(in.Phase),
		Message: in.Message,
	}
	if in.CompletionTime != nil {
		out.CompletionTime = in.CompletionTime.DeepCopy()
	}
	if in.ContainerRecreateStates != nil {
		out.ContainerRecreateStates = make([]ContainerRecreateRequestContainerRecreateState, len(in.ContainerRecreateStates))
		for i, s := range in.ContainerRecreateStates {
			out.ContainerRecreateStates[i] = ContainerRecreateRequestContainerRecreateState{
				Name: s.Name, Phase: ContainerRecreateRequestPhase(s.Phase), Message: s.Message, IsKilled: s.IsKilled,
			}
		}
	}
	return out
}

func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
