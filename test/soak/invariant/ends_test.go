package invariant

import (
	"testing"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

func TestEveryRequestEnds(t *testing.T) {
	type fault struct {
		kind     Fault
		from, to float64
	}
	cases := []struct {
		name string
		// deadline is activeDeadlineSeconds, 0 for none; the request is
		// first seen at 10 and seen ended at end (0: never).
		deadline int64
		end      float64
		faults   []fault
		finish   float64
		want     int
		// unfinished is the report's count of requests still in flight.
		unfinished int
	}{
		{"ends within its deadline", 30, 80, nil, 200, 0, 0},
		{"ends within the slack", 30, 99, nil, 200, 0, 0},
		{"ends late", 30, 110, nil, 200, 1, 0},
		{"never ends", 30, 0, nil, 200, 1, 0},
		{"in flight at the end, not yet due", 30, 0, nil, 90, 0, 1},
		{"the default deadline", 0, 650, nil, 700, 0, 0},
		{"late by the default deadline", 0, 0, nil, 700, 1, 0},
		{"the API restarted meanwhile", 30, 140, []fault{{RestartAPIServer, 20, 70}}, 200, 0, 0},
		{"overlapping faults count once", 30, 140, []fault{{RestartAPIServer, 20, 70}, {SlowAPI, 30, 60}}, 200, 0, 0},
		{"overlapping faults count once, late", 30, 160, []fault{{RestartAPIServer, 20, 70}, {SlowAPI, 30, 60}}, 200, 1, 0},
		{"a fault that does not stop requests", 30, 140, []fault{{KillDaemon, 20, 70}}, 200, 1, 0},
		{"a fault not ended", 30, 0, []fault{{LoseNode, 50, 0}}, 200, 0, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSoak()
			p := newPod("web-0")
			s.pod(0, p)
			for i, f := range tc.faults {
				s.fault(f.from, i, f.kind, "node-1")
				if f.to > 0 {
					s.faultEnded(f.to, i)
				}
			}
			r := newRequest("a", p, nil)
			if tc.deadline > 0 {
				r.Spec.ActiveDeadlineSeconds = &tc.deadline
			}
			s.request(10, r)
			for sec := 20.0; sec < tc.finish; sec += 5 {
				s.tick(sec)
			}
			if tc.end > 0 {
				r.Status.Phase = v1beta1.PhaseCompleted
				r.Status.Result = v1beta1.ResultFailed
				s.request(tc.end, r)
			}
			rep := s.finish(tc.finish)
			expect(t, rep, RequestEnds, tc.want, "not seen to end")
			if rep.Unfinished != tc.unfinished {
				t.Errorf("unfinished %d, want %d", rep.Unfinished, tc.unfinished)
			}
		})
	}
}

func TestARequestIsNotDeletedBeforeItEnds(t *testing.T) {
	cases := []struct {
		name string
		// podGone is when its pod is seen deleted, 0 for never; the
		// request is seen deleted at 20.
		podGone float64
		want    int
	}{
		{"its pod stays", 0, 1},
		{"its pod went before", 15, 0},
		{"its pod goes just after", 23, 0},
		{"its pod goes long after", 40, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSoak()
			p := newPod("web-0")
			s.pod(0, p)
			r := newRequest("a", p, nil)
			s.request(10, r)
			s.requestGone(20, r)
			if tc.podGone > 0 {
				s.podGone(tc.podGone, p)
			}
			s.tick(50)
			expect(t, s.finish(60), RequestEnds, tc.want, "deleted before it was seen to end")
		})
	}
}
