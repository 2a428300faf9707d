package v1beta1

import (
	"testing"
	"time"
)

func TestSoonestWake(t *testing.T) {
	for _, tt := range []struct {
		waits []time.Duration
		want  time.Duration
	}{
		{nil, 0},
		{[]time.Duration{0, -time.Second}, 0},
		{[]time.Duration{3 * time.Second, 0, time.Second, -time.Second, 2 * time.Second}, time.Second},
	} {
		if got := SoonestWake(tt.waits); got != tt.want {
			t.Errorf("SoonestWake(%v) = %s, want %s", tt.waits, got, tt.want)
		}
	}
}
