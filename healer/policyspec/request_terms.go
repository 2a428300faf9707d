package policyspec

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// DefaultUnreadyGraceSeconds is the unready grace of a policy's requests,
// and of kubectl rejuv restart's, when none is given: how long a pod with
// the readiness gate is out of its Services before its containers are
// stopped. Endpoint propagation through kube-proxy takes about a second
// (docs/policy.md gives the figures); the rest is margin for a busy
// control plane.
const DefaultUnreadyGraceSeconds int64 = 5

// UnreadyGrace is the unready grace of the requests a policy whose
// template has strategy s makes: s's own (0 included), else the default.
func UnreadyGrace(s *v1beta1.ContainerRecreateRequestStrategy) int64 {
	if s != nil && s.UnreadyGracePeriodSeconds != nil {
		return *s.UnreadyGracePeriodSeconds
	}
	return DefaultUnreadyGraceSeconds
}

// ValidateRequestTerms checks a request's strategy, deadline and TTL, under
// p: a request's spec, or a policy's spec.recreate, whose terms its
// requests take, so that a policy the API accepts makes requests it
// accepts too.
func ValidateRequestTerms(p *field.Path, s *v1beta1.ContainerRecreateRequestStrategy, activeDeadlineSeconds *int64, ttlSecondsAfterFinished *int32) field.ErrorList {
	var errs field.ErrorList
	if s != nil {
		sp := p.Child("strategy")
		switch s.FailurePolicy {
		case "", v1beta1.FailurePolicyFail, v1beta1.FailurePolicyIgnore:
		default:
			errs = append(errs, field.NotSupported(sp.Child("failurePolicy"), s.FailurePolicy, []v1beta1.ContainerRecreateRequestFailurePolicyType{v1beta1.FailurePolicyFail, v1beta1.FailurePolicyIgnore}))
		}
		errs = append(errs, gracePeriod(sp.Child("terminationGracePeriodSeconds"), s.TerminationGracePeriodSeconds)...)
		errs = append(errs, gracePeriod(sp.Child("unreadyGracePeriodSeconds"), s.UnreadyGracePeriodSeconds)...)
		if s.MinStartedSeconds < 0 {
			errs = append(errs, field.Invalid(sp.Child("minStartedSeconds"), s.MinStartedSeconds, "must not be negative"))
		}
	}
	if d := activeDeadlineSeconds; d != nil {
		switch {
		case *d < v1beta1.MinActiveDeadlineSeconds:
			errs = append(errs, field.Invalid(p.Child("activeDeadlineSeconds"), *d, fmt.Sprintf("must be at least %d seconds", v1beta1.MinActiveDeadlineSeconds)))
		case *d > v1beta1.MaxActiveDeadlineSeconds:
			errs = append(errs, field.Invalid(p.Child("activeDeadlineSeconds"), *d, fmt.Sprintf("must be at most %d seconds (a week)", v1beta1.MaxActiveDeadlineSeconds)))
		}
	}
	if ttl := ttlSecondsAfterFinished; ttl != nil && *ttl < 0 {
		errs = append(errs, field.Invalid(p.Child("ttlSecondsAfterFinished"), *ttl, "must not be negative"))
	}
	return errs
}

// gracePeriod checks a grace period in seconds: from 0 to a day.
func gracePeriod(p *field.Path, v *int64) field.ErrorList {
	switch {
	case v == nil:
		return nil
	case *v < 0:
		return field.ErrorList{field.Invalid(p, *v, "must not be negative")}
	case *v > v1beta1.MaxGracePeriodSeconds:
		return field.ErrorList{field.Invalid(p, *v, fmt.Sprintf("must be at most %d seconds (a day)", v1beta1.MaxGracePeriodSeconds))}
	}
	return nil
}
