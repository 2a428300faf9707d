package invariant

import (
	"testing"
	"time"
)

func TestStalledCountsOverlappingFaultsOnce(t *testing.T) {
	type fault struct {
		kind     Fault
		from, to float64 // to 0: not ended
	}
	cases := []struct {
		name     string
		faults   []fault
		from, to float64
		want     float64
	}{
		{"none", nil, 0, 100, 0},
		{"one inside", []fault{{SlowAPI, 10, 20}}, 0, 100, 10},
		{"one cut by the span", []fault{{SlowAPI, 10, 20}}, 15, 100, 5},
		{"one after the span", []fault{{SlowAPI, 110, 120}}, 0, 100, 0},
		{"overlapping", []fault{{SlowAPI, 10, 30}, {RestartAPIServer, 20, 40}}, 0, 100, 30},
		{"nested", []fault{{SlowAPI, 10, 50}, {RestartAPIServer, 20, 30}}, 0, 100, 40},
		{"apart", []fault{{SlowAPI, 10, 20}, {RestartAPIServer, 30, 40}}, 0, 100, 20},
		{"not ended", []fault{{SlowAPI, 90, 0}}, 0, 100, 10},
		{"another kind", []fault{{KillDaemon, 10, 20}}, 0, 100, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := NewChecker(DefaultSlack(), nil)
			for i, f := range tc.faults {
				c.Observe(FaultStarted{At: at(f.from), ID: i, Kind: f.kind})
			}
			for i, f := range tc.faults {
				if f.to > 0 {
					c.faultEnded(FaultEnded{At: at(f.to), ID: i})
				}
			}
			got := c.stalled([]Fault{SlowAPI, RestartAPIServer}, at(tc.from), at(tc.to))
			if want := time.Duration(tc.want * float64(time.Second)); got != want {
				t.Errorf("stalled %s, want %s", got, want)
			}
		})
	}
}

func TestExplainingIsTheEarliestFaultThatFits(t *testing.T) {
	c := NewChecker(DefaultSlack(), nil)
	c.Observe(FaultStarted{At: at(10), ID: 1, Kind: KillDaemon, Target: "a"})
	c.Observe(FaultStarted{At: at(15), ID: 2, Kind: KillDaemon, Target: "b"})
	c.Observe(FaultStarted{At: at(16), ID: 3, Kind: LoseNode, Target: "b"})
	c.Observe(FaultEnded{At: at(20), ID: 1})
	cases := []struct {
		at    float64
		kinds []Fault
		match func(*window) bool
		want  int
	}{
		{12, []Fault{KillDaemon}, nil, 1},
		{22, []Fault{KillDaemon}, nil, 1},
		{30, []Fault{KillDaemon}, nil, 2},
		{17, []Fault{KillDaemon}, func(w *window) bool { return w.target == "b" }, 2},
		{17, []Fault{LoseNode}, nil, 3},
		{5, []Fault{KillDaemon}, nil, 0},
	}
	for _, tc := range cases {
		w := c.explaining(at(tc.at), 5*time.Second, tc.kinds, tc.match)
		got := 0
		if w != nil {
			got = w.id
		}
		if got != tc.want {
			t.Errorf("at +%.0fs %v: fault %d, want %d", tc.at, tc.kinds, got, tc.want)
		}
	}
}
