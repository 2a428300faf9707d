package policyspec

import (
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// UnavailableLimit is rollout.maxUnavailable: a count, or a percentage of the
// selected pods.
type UnavailableLimit struct {
	Count   int
	Percent int
}

// DefaultMaxUnavailable applies when the stored object lacks maxUnavailable.
var DefaultMaxUnavailable = UnavailableLimit{Percent: 25}

// Of returns how many of selected pods may be unavailable: the count, or
// the percentage rounded down, and never less than one.
func (b UnavailableLimit) Of(selected int) int {
	n := b.Count
	if b.Percent > 0 {
		n = selected * b.Percent / 100
	}
	return max(n, 1)
}

// ParseMaxUnavailable reads rollout.maxUnavailable, naming fld in its errors.
func ParseMaxUnavailable(v *intstr.IntOrString, fld *field.Path) (UnavailableLimit, field.ErrorList) {
	if v == nil {
		return DefaultMaxUnavailable, nil
	}
	if v.Type == intstr.Int {
		if v.IntVal < 1 {
			return UnavailableLimit{}, field.ErrorList{field.Invalid(fld, v.IntVal, "must be at least 1")}
		}
		return UnavailableLimit{Count: int(v.IntVal)}, nil
	}
	s := v.StrVal
	digits, ok := strings.CutSuffix(s, "%")
	if !ok {
		return UnavailableLimit{}, field.ErrorList{field.Invalid(fld, s, "a string must be a percentage such as 25%")}
	}
	p, err := strconv.Atoi(digits)
	if err != nil || digits != strconv.Itoa(p) {
		return UnavailableLimit{}, field.ErrorList{field.Invalid(fld, s, "a percentage is a whole number followed by %, such as 25%")}
	}
	if p < 1 || p > 100 {
		return UnavailableLimit{}, field.ErrorList{field.Invalid(fld, s, "must be between 1% and 100%")}
	}
	return UnavailableLimit{Percent: p}, nil
}
