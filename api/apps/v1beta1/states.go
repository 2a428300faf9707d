package v1beta1

// A request's state, as the manager and the node's daemon both read it:
// one home for what its strategy is, which of its containers are done,
// and what it came to.

// EffectiveStrategy is the request's strategy, or the zero strategy when
// it has none (a request the webhook never saw: the webhook always sets
// one).
func (r *ContainerRecreateRequest) EffectiveStrategy() ContainerRecreateRequestStrategy {
	if r.Spec.Strategy == nil {
		return ContainerRecreateRequestStrategy{}
	}
	return *r.Spec.Strategy
}

// States is one state per container of the request's spec, in its order:
// the recorded one where there is one, a Pending one for the rest.
func (r *ContainerRecreateRequest) States() []ContainerRecreateRequestContainerRecreateState {
	byName := make(map[string]ContainerRecreateRequestContainerRecreateState, len(r.Status.ContainerRecreateStates))
	for _, s := range r.Status.ContainerRecreateStates {
		byName[s.Name] = s
	}
	out := make([]ContainerRecreateRequestContainerRecreateState, len(r.Spec.Containers))
	for i, c := range r.Spec.Containers {
		s, ok := byName[c.Name]
		if !ok {
			s = ContainerRecreateRequestContainerRecreateState{Name: c.Name, Phase: PhasePending}
		}
		out[i] = s
	}
	return out
}

// AnyKilled says whether a container of the request has been stopped.
func (r *ContainerRecreateRequest) AnyKilled() bool {
	for _, s := range r.Status.ContainerRecreateStates {
		if s.IsKilled {
			return true
		}
	}
	return false
}

// Open says whether the request has neither completed nor is being
// deleted: its pod's containers may still be recreated for it.
func (r *ContainerRecreateRequest) Open() bool {
	return r.Status.Phase != PhaseCompleted && r.DeletionTimestamp == nil
}

// MayHoldUnready says whether the request may keep its pod out of service
// (unready, through the KruisePodReady gate): it asks for an unready grace
// and is open, whether or not it has taken the pod out yet. The pod goes
// back in service only once no request of it may hold it.
func (r *ContainerRecreateRequest) MayHoldUnready() bool {
	return r.Open() && r.EffectiveStrategy().UnreadyGracePeriodSeconds != nil
}

// Finished says whether the container is done with: Succeeded or Failed.
func (s *ContainerRecreateRequestContainerRecreateState) Finished() bool {
	return s.Phase == PhaseSucceeded || s.Phase == PhaseFailed
}

// AllFinished says whether every container of the status is done with.
func (st *ContainerRecreateRequestStatus) AllFinished() bool {
	for i := range st.ContainerRecreateStates {
		if !st.ContainerRecreateStates[i].Finished() {
			return false
		}
	}
	return true
}

// FailUnfinished fails every container not done with, saying why.
func (st *ContainerRecreateRequestStatus) FailUnfinished(why string) {
	for i := range st.ContainerRecreateStates {
		if s := &st.ContainerRecreateStates[i]; !s.Finished() {
			s.Phase, s.Message = PhaseFailed, why
		}
	}
}

// ResultOf sums up per-container states: Succeeded when all succeeded,
// Failed when none did, PartiallySucceeded otherwise; empty for no states.
func ResultOf(states []ContainerRecreateRequestContainerRecreateState) ContainerRecreateRequestResult {
	succeeded := 0
	for _, s := range states {
		if s.Phase == PhaseSucceeded {
			succeeded++
		}
	}
	switch {
	case len(states) == 0:
		return ""
	case succeeded == len(states):
		return ResultSucceeded
	case succeeded == 0:
		return ResultFailed
	default:
		return ResultPartiallySucceeded
	}
}
