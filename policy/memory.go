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

	// what is evaluated: the program, the rule ("" for all at once) and
	// the pod, named in an overrun.
	program   *Program
	rule, pod string
	began     time.Time
	// overAt is when the guard stopped it at its memory bound.
	overAt time.Time
	// overrun says how it ran past its bounds in a step the sandbox could
	// not stop; nil while it did not.
	overrun atomic.Pointer[overrunWhy]
	// recorded is done once the overrun is written to the journal.
	recorded sync.WaitGroup
}

// Overruns: an evaluation still running overrunGrace after its deadline,
// or memoryOverrunGrace after the guard stopped it at its memory bound and
// past twice the bound, is in a step that OPA does not interrupt (a
// built-in). Evaluations beside a greedy one are charged its allocations
// too, but stop within a step of being stopped.
const (
	overrunGrace       = time.Second
	memoryOverrunGrace = 25 * time.Millisecond
)

// begin watches an evaluation that cancel stops, from now on. Its charge
// starts from the watcher's last reading, up to one check old: an
// evaluation may be charged a few milliseconds of the process's
// allocations before it, which costs less than reading them for every
// evaluation.
func (g *memoryGuard) begin(p *Program, rule, pod string, cancel topdown.Cancel) *watched {
	w := &watched{limit: p.opts.MemoryLimit, cancel: cancel, program: p, rule: rule, pod: pod, began: time.Now()}
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
		var late []*watched
		for w := range g.inFlight {
			if total-w.start > w.limit && !w.over.Swap(true) {
				w.cancel.Cancel()
				w.overAt = now
			}
			if w.overrun.Load() == nil {
				if why := w.overrunBy(now, total); why.why != "" {
					w.recorded.Add(1)
					w.overrun.Store(&why)
					late = append(late, w)
				}
			}
		}
		g.mu.Unlock()
		for _, w := range late {
			w.record()
		}
	}
}

// overrunWhy is how an evaluation ran past its bounds: why is empty while
// it did not.
type overrunWhy struct {
	why string
	// memory tells it allocated past its memory bound after it was
	// stopped, rather than ran past its deadline: a charge that holds the
	// allocations of evaluations beside it, if it was crowded.
	memory bool
}

// overrunBy says how the evaluation ran past its bounds, if it did.
func (w *watched) overrunBy(now time.Time, total uint64) overrunWhy {
	deadline := w.program.opts.Deadline
	switch {
	case now.Sub(w.began) > deadline+overrunGrace:
		return overrunWhy{why: fmt.Sprintf("it ran %s past its deadline (%s)", (now.Sub(w.began) - deadline).Round(time.Millisecond), deadline)}
	case w.over.Load() && now.Sub(w.overAt) > memoryOverrunGrace && total-w.start > 2*w.limit:
		return overrunWhy{why: fmt.Sprintf("it allocated %s, past its bound of %s, after it was stopped", bytesText(total-w.start), bytesText(w.limit)), memory: true}
	}
	return overrunWhy{}
}

// overrun is the overrun of the evaluation, with why.
func (w *watched) overrunOf(why string) Overrun {
	ref := w.program.ref
	rules := []string{w.rule}
	if w.rule == "" {
		rules = w.program.Rules()
	}
	return Overrun{Namespace: ref.Namespace, Name: ref.Name, UID: ref.UID, Generation: ref.Generation, Rules: rules, Pod: w.pod, Why: why}
}

// record writes the overrun to the program's journal, if it has one, in
// case the step kills the process or lasts until it is restarted.
func (w *watched) record() {
	defer w.recorded.Done()
	j := w.program.opts.Journal
	if j == nil {
		return
	}
	o := w.overrunOf(w.overrun.Load().why)
	if err := j.Record(o); err != nil {
		w.program.opts.Log.Error(err, "the overrun of a rule could not be recorded: a restart would evaluate it again", "policy", w.program.ref.String())
	}
}

// Stuck returns an error while an evaluation has run more than after past
// its deadline in one step: only a restart of the process stops it (the
// policy is quarantined then, from the journal). For the liveness check.
func Stuck(after time.Duration) error {
	g := guard
	g.mu.Lock()
	defer g.mu.Unlock()
	now := time.Now()
	for w := range g.inFlight {
		if why := w.overrun.Load(); why != nil && now.Sub(w.began)-w.program.opts.Deadline > after {
			o := w.overrunOf(why.why)
			return fmt.Errorf("policy %s/%s: %s for pod %s has run %s past its deadline in one step that cannot be stopped",
				o.Namespace, o.Name, o.RulesText(), o.Pod, (now.Sub(w.began) - w.program.opts.Deadline).Round(time.Second))
		}
	}
	return nil
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
