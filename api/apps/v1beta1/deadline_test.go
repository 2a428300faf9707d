package v1beta1

import (
	"math"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDeadline(t *testing.T) {
	created := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	r := &ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(created)}}
	if d, ok := r.Deadline(); ok || !d.IsZero() {
		t.Errorf("without activeDeadlineSeconds: %v, %t; want none", d, ok)
	}
	seconds := int64(90)
	r.Spec.ActiveDeadlineSeconds = &seconds
	if d, ok := r.Deadline(); !ok || !d.Equal(created.Add(90*time.Second)) {
		t.Errorf("with 90 s: %v, %t; want 90 s after the creation", d, ok)
	}
	// The longest deadlines are the furthest, never in the past: from
	// 9,223,372,037 s up, seconds in nanoseconds wrap past int64.
	for _, long := range []int64{9_300_000_000, math.MaxInt64} {
		r.Spec.ActiveDeadlineSeconds = &long
		if d, ok := r.Deadline(); !ok || !d.After(created.Add(100*365*24*time.Hour)) {
			t.Errorf("with %d s: %v, %t; want a century or more after the creation", long, d, ok)
		}
	}
}
