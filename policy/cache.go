package policy

import (
	"slices"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// smallCacheLimit is how many values a frame of the small virtual cache
// holds before it hands over to OPA's hashed one.
const smallCacheLimit = 32

// smallCache is the evaluator's cache of rule values for one evaluation:
// a few refs per frame, looked up by comparison. OPA's own cache is a tree
// of hash maps, allocated afresh for every evaluation, which costs more
// than the handful of values a pod's evaluation caches. A frame that grows
// past smallCacheLimit (a function called for many arguments) moves into
// OPA's cache, so lookups never grow linear in a large frame.
type smallCache struct {
	frames []cacheFrame
}

type cacheFrame struct {
	entries []cacheEntry
	large   topdown.VirtualCache
}

type cacheEntry struct {
	ref       ast.Ref
	value     *ast.Term
	undefined bool
}

var smallCaches = sync.Pool{New: func() any { return &smallCache{frames: make([]cacheFrame, 1, 2)} }}

// newSmallCache returns an empty cache; release gives it back.
func newSmallCache() *smallCache {
	return smallCaches.Get().(*smallCache)
}

func (c *smallCache) release() {
	for i := range c.frames {
		c.frames[i].reset()
	}
	c.frames = c.frames[:1]
	smallCaches.Put(c)
}

func (f *cacheFrame) reset() {
	clear(f.entries)
	f.entries = f.entries[:0]
	f.large = nil
}

// know puts values known beforehand in the bottom frame.
func (c *smallCache) know(entries []cacheEntry) {
	f := &c.frames[0]
	if len(f.entries)+len(entries) > smallCacheLimit {
		return
	}
	f.entries = append(f.entries, entries...)
}

func (c *smallCache) top() *cacheFrame { return &c.frames[len(c.frames)-1] }

func (c *smallCache) Push() {
	if len(c.frames) < cap(c.frames) {
		// A popped frame, reset and with its slice kept for reuse.
		c.frames = c.frames[:len(c.frames)+1]
		return
	}
	c.frames = append(c.frames, cacheFrame{})
}

func (c *smallCache) Pop() {
	c.top().reset()
	c.frames = c.frames[:len(c.frames)-1]
}

func (c *smallCache) Get(ref ast.Ref) (*ast.Term, bool) {
	f := c.top()
	if f.large != nil {
		return f.large.Get(ref)
	}
	for i := range f.entries {
		if e := &f.entries[i]; sameRef(e.ref, ref) {
			return e.value, e.undefined
		}
	}
	return nil, false
}

func (c *smallCache) Put(ref ast.Ref, value *ast.Term) {
	f := c.top()
	if f.large == nil {
		for i := range f.entries {
			if e := &f.entries[i]; sameRef(e.ref, ref) {
				e.value, e.undefined = value, value == nil
				return
			}
		}
		if len(f.entries) < smallCacheLimit {
			// The evaluator reuses the slice it passes; keep a copy of
			// it (the terms themselves are not changed).
			f.entries = append(f.entries, cacheEntry{ref: slices.Clone(ref), value: value, undefined: value == nil})
			return
		}
		f.large = topdown.NewVirtualCache()
		for _, e := range f.entries {
			f.large.Put(e.ref, e.value)
		}
	}
	f.large.Put(ref, value)
}

func (c *smallCache) Keys() []ast.Ref {
	f := c.top()
	if f.large != nil {
		return f.large.Keys()
	}
	keys := make([]ast.Ref, 0, len(f.entries))
	for _, e := range f.entries {
		if e.value != nil {
			keys = append(keys, e.ref)
		}
	}
	return keys
}

// sameRef is ast.Ref.Equal comparing from the end: the refs a pod's
// evaluation caches share their beginning (data.rejuv.policy.rN) and
// differ in the rule's name.
func sameRef(a, b ast.Ref) bool {
	if len(a) != len(b) {
		return false
	}
	for i, t := range slices.Backward(a) {
		if !t.Equal(b[i]) {
			return false
		}
	}
	return true
}
