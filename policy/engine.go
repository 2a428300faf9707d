package policy

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
)

// DefaultDeadline bounds one rule's evaluation for one pod when Options
// leaves it unset.
const DefaultDeadline = 250 * time.Millisecond

// Options configure an Engine.
type Options struct {
	// Deadline bounds each evaluation of one rule for one pod.
	Deadline time.Duration
	// MemoryLimit bounds what each evaluation for one pod may allocate,
	// in bytes; DefaultMemoryLimit when zero.
	MemoryLimit uint64
	// Clock gives input.now and time.now_ns(); time.Now when nil.
	Clock func() time.Time
	// Log receives Rego print output at debug level (V(1)).
	Log logr.Logger
	// Pods caches converted pods; one of NewPodCache's when nil.
	Pods *PodCache
}

// Ref names a policy and the generation of its spec.
type Ref struct {
	Namespace, Name string
	// UID tells a policy from one deleted before it under the same name,
	// which may have had the same generation.
	UID        types.UID
	Generation int64
}

func (r Ref) String() string { return r.Namespace + "/" + r.Name }

// Engine compiles policies' rules once per generation and evaluates them
// for pods. Safe for concurrent use.
type Engine struct {
	opts     Options
	compiles atomic.Int64

	mu       sync.Mutex
	programs map[string]*programEntry
}

// programEntry is a policy's program for one generation; ready is closed
// once the compile ended, so concurrent callers wait for one compile
// instead of each doing their own.
type programEntry struct {
	// ref is the policy incarnation and generation compiled.
	ref     Ref
	ready   chan struct{}
	program *Program
	err     error
}

// NewEngine returns an Engine.
func NewEngine(o Options) *Engine {
	if o.Deadline <= 0 {
		o.Deadline = DefaultDeadline
	}
	if o.MemoryLimit == 0 {
		o.MemoryLimit = DefaultMemoryLimit
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.Pods == nil {
		o.Pods = NewPodCache(0)
	}
	return &Engine{opts: o, programs: map[string]*programEntry{}}
}

// Program returns the compiled program of the policy's generation,
// compiling rules only when that generation has not been compiled yet.
// A generation that failed to compile keeps its error until the next one.
func (e *Engine) Program(ctx context.Context, ref Ref, rules []Rule) (*Program, error) {
	key := ref.String()
	e.mu.Lock()
	entry := e.programs[key]
	if entry == nil || entry.ref != ref {
		entry = &programEntry{ref: ref, ready: make(chan struct{})}
		e.programs[key] = entry
		e.mu.Unlock()
		// Compile outside the lock: other policies go on meanwhile.
		e.compiles.Add(1)
		compiled, err := Compile(ctx, rules)
		if err == nil {
			entry.program = newProgram(ref, compiled, &e.opts)
			if entry.program.combined, err = combine(ctx, compiled); err != nil {
				e.opts.Log.V(1).Info("rules evaluated one by one", "policy", ref.String(), "reason", err.Error())
				err = nil
			}
		}
		entry.err = err
		close(entry.ready)
		return entry.program, entry.err
	}
	e.mu.Unlock()
	select {
	case <-entry.ready:
		return entry.program, entry.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Forget drops a deleted policy's program.
func (e *Engine) Forget(namespace, name string) {
	e.mu.Lock()
	delete(e.programs, Ref{Namespace: namespace, Name: name}.String())
	e.mu.Unlock()
}

// Compiles counts the compiles the engine did, for tests and metrics.
func (e *Engine) Compiles() int64 { return e.compiles.Load() }

// Pods is the engine's cache of converted pods.
func (e *Engine) Pods() *PodCache { return e.opts.Pods }
