package policy

import (
	"errors"
	"fmt"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/topdown"
)

// DefaultMemoryLimit bounds what one evaluation of a policy's rules for one
// pod may allocate when Options leaves it unset: thousands of times what
// the built-in rules allocate for a pod, and small enough that every
// policy worker evaluating a greedy rule at once stays well inside the
// manager's shipped memory limit (256 MiB).
const DefaultMemoryLimit = 32 << 20

// ErrMemory is wrapped by an EvalError when an evaluation allocated more
// than the memory limit and was stopped.
var ErrMemory = errors.New("evaluation stopped at the memory bound")

// memoryCheck is how often the guard compares what the process allocated
// with each evaluation's bound while evaluations run: an evaluation is
// stopped at most this long after it passed its bound (a few MiB more at
// the rate one core allocates).
const memoryCheck = 5 * time.Millisecond

// memoryIdle is how long the guard's watcher waits without evaluations
// before it stops; the next evaluation starts it again.
const memoryIdle = time.Second

// guard watches every evaluation of the process: the bound is what the
// process allocated while the evaluation ran, and allocations are the
// process's, so there is one guard however many engines there are.
var guard = &memoryGuard{inFlight: map[*watched]struct{}{}}

// memoryGuard stops evaluations that allocate more than their bound. Go
// counts allocations per process, not per goroutine, so each evaluation
// in flight is charged with everything the process allocated since it
// started, its neighbours' allocations included. An evaluation stopped
// while others ran beside it is therefore run again alone (alone held
// exclusively), where what the process allocates is its own (and the
// manager's other work's, a little); only that verdict counts.
type memoryGuard struct {
	// alone is held shared by every evaluation and exclusively by an
	// evaluation run again alone.
	alone sync.RWMutex

	mu       sync.Mutex
	inFlight map[*watched]struct{}
	watching bool
	// total is what the process had allocated at the watcher's last check.
	total uint64

	// rescued counts evaluations stopped beside others that ended within
	// their bound when run again alone.
	rescued atomic.Int64
}

// watched is one evaluation in flight.
type watched struct {
	start, limit uint64
	cancel       topdown.Cancel
	over         atomic.Bool
	// crowded is set when another evaluation ran at some moment of this
	// one's: its charge may hold their allocations.
	crowded atomic.Bool
}

// begin watches an evaluation that cancel stops, from now on. Its charge
// starts from the watcher's last reading, up to one check old: an
// evaluation may be charged a few milliseconds of the process's
// allocations before it, which costs less than reading them for every
// evaluation.
func (g *memoryGuard) begin(limit uint64, cancel topdown.Cancel) *watched {
	w := &watched{limit: limit, cancel: cancel}
	g.mu.Lock()
	if !g.watching {
		g.watching = true
		g.total = allocated()
		go g.watch()
	}
	w.start = g.total
	if len(g.inFlight) > 0 {
		w.crowded.Store(true)
		for other := range g.inFlight {
			other.crowded.Store(true)
		}
	}
	g.inFlight[w] = struct{}{}
	g.mu.Unlock()
	return w
}

// end stops watching an evaluation.
func (g *memoryGuard) end(w *watched) {
	g.mu.Lock()
	delete(g.inFlight, w)
	g.mu.Unlock()
}

// watch stops each evaluation in flight whose charge passed its bound,
// until no evaluation has run for memoryIdle.
func (g *memoryGuard) watch() {
	tick := time.NewTicker(memoryCheck)
	defer tick.Stop()
	idleSince := time.Now()
	for now := range tick.C {
		total := allocated()
		g.mu.Lock()
		g.total = total
		if len(g.inFlight) > 0 {
			idleSince = now
		} else if now.Sub(idleSince) >= memoryIdle {
			g.watching = false
			g.mu.Unlock()
			return
		}
		for w := range g.inFlight {
			if total-w.start > w.limit && !w.over.Swap(true) {
				w.cancel.Cancel()
			}
		}
		g.mu.Unlock()
	}
}

// allocated is what the process has allocated on the heap since it
// started (a cumulative count, garbage included).
func allocated() uint64 {
	s := [1]metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s[:])
	return s[0].Value.Uint64()
}

// memoryError is the error of an evaluation stopped at its bound.
func memoryError(limit uint64) error {
	return fmt.Errorf("%w: it allocated more than %s for one pod", ErrMemory, bytesText(limit))
}

// bytesText writes a size in MiB.
func bytesText(n uint64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
