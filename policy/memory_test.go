package policy

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rejuv-dev/rejuv/policy/policytest"
)

// busyRule takes a millisecond or two and allocates about a MiB for each pod,
// well inside the bound, so that evaluations of it are in flight when a
// greedy rule beside them passes its bound. It reads the time, so that the
// same pod is evaluated again each time rather than given its kept verdict.
const busyRule = `package busy
import rego.v1
recreate contains c.name if {
	some c in input.containers
	input.now != ""
	count([x | some x in numbers.range(1, 5000); x % 3 == 0]) > 0
}
`

const testMemoryLimit = 16 << 20

// TestMemoryBoundStopsAGreedyRule: a rule that keeps building is stopped
// once it allocated its bound, long before its deadline, with an error
// that says so; the same rule without a bound (a bound far away) goes on
// allocating until the deadline.
func TestMemoryBoundStopsAGreedyRule(t *testing.T) {
	rule := Rule{Name: "greedy", Module: policytest.Greedy}
	unbounded := program(t, Options{Deadline: 500 * time.Millisecond, MemoryLimit: 1 << 40}, rule)
	before := allocated()
	res, err := unbounded.Evaluate(context.Background(), target(time.Now(), "app"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	took := allocated() - before
	if !errors.Is(res[0].Err, ErrDeadline) || took < 5*testMemoryLimit {
		t.Fatalf("premise: unbounded, the rule allocated %s in half a second and ended with %v; want more than five times the bound of %s, stopped at the deadline",
			bytesText(took), res[0].Err, bytesText(testMemoryLimit))
	}

	bounded := program(t, Options{Deadline: 20 * time.Second, MemoryLimit: testMemoryLimit}, rule)
	for round := range 3 {
		before, start := allocated(), time.Now()
		res, err := bounded.Evaluate(context.Background(), target(time.Now(), "app"), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		took, elapsed := allocated()-before, time.Since(start)
		if !errors.Is(res[0].Err, ErrMemory) || !strings.Contains(res[0].Err.Error(), "it allocated more than 16 MiB for one pod") {
			t.Errorf("round %d: got %v (matches %v), want the rule stopped at its memory bound", round, res[0].Err, res[0].Matches)
		}
		// Stopped within a few checks of passing the bound; the first
		// round runs the combined query, then the rule on its own.
		if took > 4*testMemoryLimit || elapsed > 5*time.Second {
			t.Errorf("round %d: the rule allocated %s in %s before it was stopped, want at most %s",
				round, bytesText(took), elapsed.Round(time.Millisecond), bytesText(4*testMemoryLimit))
		}
	}
}

// TestMemoryBoundChargesOnlyTheGreedy: evaluations that run beside a
// greedy rule are charged with its allocations too (Go counts them per
// process); they are run again alone and keep their results, while the
// greedy rule fails every time.
func TestMemoryBoundChargesOnlyTheGreedy(t *testing.T) {
	// A bound a few times what the busy rule allocates, so that the greedy
	// rule's allocations during one of its evaluations pass it.
	const limit = 4 << 20
	o := Options{Deadline: 20 * time.Second, MemoryLimit: limit}
	greedy := program(t, o, Rule{Name: "greedy", Module: policytest.Greedy})
	busy := program(t, o, Rule{Name: "busy", Module: busyRule})

	before := allocated()
	res, err := busy.Evaluate(context.Background(), target(time.Now(), "app"), time.Now())
	if err != nil || res[0].Err != nil || len(res[0].Matches) != 1 {
		t.Fatalf("busy rule alone: %v %v %v", err, res[0].Err, res[0].Matches)
	}
	if took := allocated() - before; took > limit/2 {
		t.Fatalf("premise: the busy rule allocated %s for one pod alone, want well under the bound of %s", bytesText(took), bytesText(limit))
	}

	rescued := guard.rescued.Load()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var busyRuns int
	var busyErrs []error
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				res, err := busy.Evaluate(context.Background(), target(time.Now(), "app"), time.Now())
				mu.Lock()
				busyRuns++
				if err == nil {
					err = res[0].Err
				}
				if err == nil && len(res[0].Matches) != 1 {
					err = errors.New("no match")
				}
				if err != nil {
					busyErrs = append(busyErrs, err)
				}
				mu.Unlock()
			}
		})
	}
	for round := range 10 {
		res, err := greedy.Evaluate(context.Background(), target(time.Now(), "app"), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if !errors.Is(res[0].Err, ErrMemory) {
			t.Errorf("greedy round %d: got %v, want it stopped at its memory bound", round, res[0].Err)
		}
	}
	close(stop)
	wg.Wait()
	if len(busyErrs) > 0 {
		t.Errorf("%d of %d evaluations of the busy rule failed beside the greedy one, first: %v", len(busyErrs), busyRuns, busyErrs[0])
	}
	if guard.rescued.Load()-rescued == 0 {
		t.Errorf("premise: no evaluation of the busy rule (%d of them) was charged with the greedy rule's allocations and run again alone", busyRuns)
	}
	t.Logf("%d evaluations of the busy rule beside 10 of the greedy one; %d stopped beside it and run again alone", busyRuns, guard.rescued.Load()-rescued)
}
