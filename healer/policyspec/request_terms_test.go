package policyspec

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// TestRequestTermsHaveBounds: the webhooks refuse durations past their
// maximums with a message naming the field and the bound, as the CRDs'
// schemas do (OpenKruise's CRD, beside which Rejuv may run, has none), and
// admit the bounds themselves.
func TestRequestTermsHaveBounds(t *testing.T) {
	day, week := int64(v1beta1.MaxGracePeriodSeconds), int64(v1beta1.MaxActiveDeadlineSeconds)
	over := func(v int64) *int64 { return new(v + 1) }
	for _, tc := range []struct {
		name     string
		strategy *v1beta1.ContainerRecreateRequestStrategy
		deadline *int64
		want     string // empty: admitted
	}{
		{"the bounds", &v1beta1.ContainerRecreateRequestStrategy{TerminationGracePeriodSeconds: &day, UnreadyGracePeriodSeconds: &day}, &week, ""},
		{"a grace over a day", &v1beta1.ContainerRecreateRequestStrategy{TerminationGracePeriodSeconds: over(day)}, nil,
			"spec.strategy.terminationGracePeriodSeconds: Invalid value: 86401: must be at most 86400 seconds (a day)"},
		{"an unready grace that overflows", &v1beta1.ContainerRecreateRequestStrategy{UnreadyGracePeriodSeconds: new(int64(9_300_000_000))}, nil,
			"spec.strategy.unreadyGracePeriodSeconds: Invalid value: 9300000000: must be at most 86400 seconds (a day)"},
		{"a deadline over a week", nil, over(week),
			"spec.activeDeadlineSeconds: Invalid value: 604801: must be at most 604800 seconds (a week)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := ValidateRequestTerms(field.NewPath("spec"), tc.strategy, tc.deadline, nil)
			switch {
			case tc.want == "" && len(errs) > 0:
				t.Errorf("refused: %v", errs)
			case tc.want != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.want)):
				t.Errorf("got %v, want one error containing %q", errs, tc.want)
			}
		})
	}
}
