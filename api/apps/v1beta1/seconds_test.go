package v1beta1

import (
	"math"
	"testing"
	"time"
)

// TestSecondsDuration: seconds become the same duration while it fits,
// the longest whole-second duration past it, never a negative one, and a
// runtime's conversion of the whole seconds back to nanoseconds does not
// wrap either.
func TestSecondsDuration(t *testing.T) {
	longest := time.Duration(maxDurationSeconds) * time.Second
	for _, c := range []struct {
		seconds int64
		want    time.Duration
	}{
		{0, 0},
		{30, 30 * time.Second},
		{MaxGracePeriodSeconds, 24 * time.Hour},
		{MaxActiveDeadlineSeconds, 7 * 24 * time.Hour},
		{9_223_372_036, longest},
		{9_223_372_037, longest},
		{9_300_000_000, longest},
		{math.MaxInt64, longest},
		{-1, 0},
		{math.MinInt64, 0},
	} {
		got := SecondsDuration(c.seconds)
		if got != c.want {
			t.Errorf("SecondsDuration(%d) = %v, want %v", c.seconds, got, c.want)
		}
		if whole := int64(math.Ceil(got.Seconds())); whole > math.MaxInt64/int64(time.Second) {
			t.Errorf("SecondsDuration(%d) = %v: %d whole seconds wrap in nanoseconds", c.seconds, got, whole)
		}
	}
}
