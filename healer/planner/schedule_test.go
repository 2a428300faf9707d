package planner

import (
	"testing"
	"time"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
)

func TestScheduleTicks(t *testing.T) {
	spec := v1alpha1.RecreatePolicySpec{Schedule: &v1alpha1.Schedule{Cron: "0 * * * *", StartingDeadlineSeconds: new(int64(600))}}
	parsed, errs := policyspec.Parse(&spec)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	s := parsed.Schedule
	at := func(h, m int) time.Time { return time.Date(2026, 11, 21, h, m, 0, 0, time.UTC) }
	cases := []struct {
		name        string
		since, now  time.Time
		due, missed time.Time
		next        time.Time
	}{
		{"nothing due", at(10, 0), at(10, 30), time.Time{}, time.Time{}, at(11, 0)},
		{"due now", at(10, 0), at(11, 0), at(11, 0), time.Time{}, at(12, 0)},
		{"due within the deadline", at(10, 0), at(11, 10), at(11, 0), time.Time{}, at(12, 0)},
		{"missed by a second", at(10, 0), at(11, 10).Add(time.Second), time.Time{}, at(11, 0), at(12, 0)},
		{"down for hours: the latest missed, none due", at(3, 0), at(9, 30), time.Time{}, at(9, 0), at(10, 0)},
		{"down for hours, back in time for one", at(3, 0), at(9, 5), at(9, 0), at(8, 0), at(10, 0)},
	}
	for _, tc := range cases {
		got := TickAt(s, tc.since, tc.now)
		if !got.Due.Equal(tc.due) || !got.Missed.Equal(tc.missed) || !got.Next.Equal(tc.next) {
			t.Errorf("%s: due %s missed %s next %s; want %s %s %s", tc.name, got.Due, got.Missed, got.Next, tc.due, tc.missed, tc.next)
		}
	}
}
