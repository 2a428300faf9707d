package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
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
	// Log receives Rego print output at debug level (V(1)).
	Log logr.Logger
	// Pods caches converted pods; one of NewPodCache's when nil.
	Pods *PodCache
	// Journal records the evaluations that run past their bounds in a
	// step the sandbox cannot stop; none when nil.
	Journal *Journal
	// MaxCompiledBytes bounds what the compilations the engine keeps may
	// keep in memory, all policies together, as estimated from their
	// parsed rules; DefaultMaxCompiledBytes when zero.
	MaxCompiledBytes uint64
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

// Engine compiles policies' rules and evaluates them for pods. Policies
// whose rules are the same (the same built-ins with the same parameters,
// as a cluster's namespaces usually have) share one compilation, which is
// made once and kept while some policy's current generation uses it. Safe
// for concurrent use.
type Engine struct {
	opts     Options
	compiles atomic.Int64

	mu       sync.Mutex
	programs map[string]*programEntry
	// compiled are the compilations in use, by rulesKey.
	compiled map[string]*compilation
	// kept is the estimated size of the compilations in use, bounded by
	// Options.MaxCompiledBytes.
	kept uint64
}

// programEntry is a policy's program for one generation; ready is closed
// once it is built, so concurrent callers wait for one build instead of
// each doing their own.
type programEntry struct {
	// ref is the policy incarnation and generation compiled.
	ref Ref
	// rules keys the compilation the program uses.
	rules   string
	ready   chan struct{}
	program *Program
	err     error
}

// compilation is one set of rules compiled, alone and combined, and how
// many policies' current programs use it.
type compilation struct {
	ready    chan struct{}
	rules    []*compiledRule
	combined *combined
	traits   traits
	err      error
	users    int
	// size is the rules' estimated compiled size, once counted against
	// the engine's bound.
	size uint64
}

// NewEngine returns an Engine.
func NewEngine(o Options) *Engine {
	if o.Deadline <= 0 {
		o.Deadline = DefaultDeadline
	}
	if o.MemoryLimit == 0 {
		o.MemoryLimit = DefaultMemoryLimit
	}
	if o.Pods == nil {
		o.Pods = NewPodCache(0)
	}
	if o.MaxCompiledBytes == 0 {
		o.MaxCompiledBytes = DefaultMaxCompiledBytes
	}
	return &Engine{opts: o, programs: map[string]*programEntry{}, compiled: map[string]*compilation{}}
}

// Program returns the program of the policy's generation, compiling rules
// only when no policy's current generation has compiled the same rules.
// A generation whose rules failed to compile keeps its error until the
// next one.
func (e *Engine) Program(ctx context.Context, ref Ref, rules []Rule) (*Program, error) {
	key := ref.String()
	e.mu.Lock()
	entry := e.programs[key]
	if entry == nil || entry.ref != ref {
		old := entry
		entry = &programEntry{ref: ref, rules: rulesKey(rules), ready: make(chan struct{})}
		e.programs[key] = entry
		// The new generation's first: one whose rules did not change
		// keeps their compilation.
		c, compile := e.acquire(entry.rules)
		if old != nil {
			e.retire(old)
		}
		e.mu.Unlock()
		if compile {
			// Outside the lock: other policies go on meanwhile. Other
			// policies may wait for it too: it is not cancelled with this
			// caller's context.
			e.compile(context.WithoutCancel(ctx), entry.rules, c, ref, rules)
		}
		<-c.ready
		if errors.Is(c.err, ErrCompiledTotal) {
			// Not kept with the generation: the next call tries again,
			// once other policies' rules may be gone.
			e.mu.Lock()
			if e.programs[key] == entry {
				delete(e.programs, key)
				e.release(entry.rules)
			}
			e.mu.Unlock()
		}
		var program *Program
		if c.err == nil {
			program = newProgram(ref, c.rules, c.combined, c.traits, &e.opts)
		}
		e.mu.Lock()
		entry.program, entry.err = program, c.err
		if program != nil && e.programs[key] != entry {
			// A newer generation took its place meanwhile.
			program.retired.Store(true)
		}
		e.mu.Unlock()
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

// acquire returns the compilation of the rules keyed rules, counting one
// more user, and whether the caller must make it. e.mu is held.
func (e *Engine) acquire(rules string) (*compilation, bool) {
	c := e.compiled[rules]
	if c != nil {
		c.users++
		return c, false
	}
	c = &compilation{ready: make(chan struct{}), users: 1}
	e.compiled[rules] = c
	return c, true
}

// release counts one user fewer of a compilation and drops it when none
// is left. e.mu is held.
func (e *Engine) release(rules string) {
	if c := e.compiled[rules]; c != nil {
		if c.users--; c.users <= 0 {
			delete(e.compiled, rules)
			e.kept -= c.size
		}
	}
}

// compile makes the compilation c of rules, keyed key, within the
// engine's bound on what compilations keep.
func (e *Engine) compile(ctx context.Context, key string, c *compilation, ref Ref, rules []Rule) {
	defer close(c.ready)
	e.compiles.Add(1)
	compiled, size, err := compileSized(ctx, rules)
	if err != nil {
		c.err = err
		return
	}
	e.mu.Lock()
	c.err = e.reserve(key, c, size)
	e.mu.Unlock()
	if c.err != nil {
		return
	}
	c.rules = compiled
	if c.combined, c.traits, err = assemble(ctx, c.rules); err != nil {
		e.opts.Log.V(1).Info("rules evaluated one by one", "policy", ref.String(), "reason", err.Error())
	}
}

// rulesKey identifies a policy's rules: their names, modules,
// parameters and whether they have twins, in order.
func rulesKey(rules []Rule) string {
	var b strings.Builder
	for _, r := range rules {
		params, err := json.Marshal(r.Parameters)
		if err != nil {
			// Not to be shared: Compile reports the parameters.
			params = fmt.Appendf(nil, "%p", r.Parameters)
		}
		fmt.Fprintf(&b, "%d:%s|%d:%s|%d:%s|%d:%s|%t;", len(r.Name), r.Name, len(r.Builtin), r.Builtin, len(r.Module), r.Module, len(params), params, r.Native != nil)
	}
	return b.String()
}

// Forget drops a deleted policy's program.
func (e *Engine) Forget(namespace, name string) {
	key := Ref{Namespace: namespace, Name: name}.String()
	e.mu.Lock()
	if entry := e.programs[key]; entry != nil {
		e.retire(entry)
		delete(e.programs, key)
	}
	e.mu.Unlock()
}

// retire lets go of a generation's program: its compilation is released,
// and the pods drop what they keep for it. e.mu is held; a program still
// being built is retired once built (see Program).
func (e *Engine) retire(entry *programEntry) {
	e.release(entry.rules)
	if entry.program != nil {
		entry.program.retired.Store(true)
	}
}

// Compiles counts the compiles the engine did, for tests and metrics.
func (e *Engine) Compiles() int64 { return e.compiles.Load() }

// Pods is the engine's cache of converted pods.
func (e *Engine) Pods() *PodCache { return e.opts.Pods }
