package policy

import (
	"maps"
	"slices"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// podDoc is the converted, policy-independent part of a pod's input for
// one resourceVersion: the pod object per shape, each container's fields
// taken from the pod, and the entry each program took last of each
// candidate (its identity reused while the manager's history of the
// container stays the same, so that results kept for it still apply).
//
// A pod's next resourceVersion starts from the document before (prev): the
// parts that did not change are taken over instead of converted again (and
// so the results the programs kept for them still apply, see podResults).
// Usually only a container or two changed.
type podDoc struct {
	resourceVersion string

	mu sync.Mutex
	// prev is the document of the resourceVersion before, until this one
	// has been evaluated once.
	prev *podDoc
	// pods holds the converted pod per shape (the fields some policy's
	// rules read), see podShape: one or two shapes for most pods.
	pods []shapedPod
	// containers are the containers' parts, one per container name.
	containers []*containerEntry
	// candidates are the entries the programs took last, the one taken
	// longest ago first: for each container, one per history in use.
	candidates []candidateEntry
}

// shapedPod is input.pod of one shape, by the shape's key.
type shapedPod struct {
	key  string
	term *ast.Term
}

// podOf is input.pod of the shape keyed key, nil if not converted. d.mu is
// held.
func (d *podDoc) podOf(key string) *ast.Term {
	for _, p := range d.pods {
		if p.key == key {
			return p.term
		}
	}
	return nil
}

// candidateEntry is a candidate's entry: the container's part it is
// built on, the history it is built with, its identity and the program
// that took it last.
type candidateEntry struct {
	candidate ContainerCandidate
	base      *containerEntry
	id        *entryID
	program   *Program
}

// entryID stands for one candidate's entry in the results kept for it
// (keptResults): the document hands the entry, and so its identity, over
// while the container's facts and history stay the same; an entry built
// again is another. Not empty, so that each is a distinct pointer.
type entryID struct{ _ byte }

// sameHistory reports whether c carries the history the entry was built
// with.
func (e *candidateEntry) sameHistory(c *ContainerCandidate) bool {
	h := &e.candidate
	sameMemory := h.Memory == c.Memory || h.Memory != nil && c.Memory != nil && *h.Memory == *c.Memory
	return h.Name == c.Name && h.NotReadySince.Equal(c.NotReadySince) && h.Recreations == c.Recreations &&
		h.LastRecreation.Equal(c.LastRecreation) && maps.Equal(h.Signals, c.Signals) && sameMemory
}

// dropPrevious lets go of the document before: once an evaluation took
// over what it could from it, and when a newer document takes this one's
// place (one document back at most).
func (d *podDoc) dropPrevious() {
	d.mu.Lock()
	d.prev = nil
	d.mu.Unlock()
}

// podValue returns input.pod of the shape: converted once per resourceVersion,
// and the previous resourceVersion's value when the fields the shape reads
// did not change (so that the no-data results kept with it still apply).
func (d *podDoc) podValue(pod *corev1.Pod, shape *podShape) (*ast.Term, error) {
	d.mu.Lock()
	t, prev := d.podOf(shape.key), d.prev
	d.mu.Unlock()
	if t != nil {
		return t, nil
	}
	t, err := shape.convert(pod)
	if err != nil {
		return nil, err
	}
	if prev != nil {
		prev.mu.Lock()
		if old := prev.podOf(shape.key); old != nil && ast.ValueEqual(old.Value, t.Value) {
			t = old
		}
		prev.mu.Unlock()
	}
	d.mu.Lock()
	if stored := d.podOf(shape.key); stored != nil {
		// Another program converted the same shape meanwhile.
		t = stored
	} else {
		d.pods = append(d.pods, shapedPod{key: shape.key, term: t})
	}
	d.mu.Unlock()
	return t, nil
}

// entryOf returns the entry of candidate c: the one made before for the
// same history, in this resourceVersion or, when the container's facts
// did not change, the one before; otherwise one made on the container's
// part (taken over from the resourceVersion before when its facts did not
// change). p is the program that takes it. False when the pod has no such
// container.
func (d *podDoc) entryOf(pod *corev1.Pod, c *ContainerCandidate, p *Program) (candidateEntry, bool) {
	d.mu.Lock()
	base, entry, found := d.entryFor(c)
	prev := d.prev
	d.mu.Unlock()
	if base == nil {
		facts, ok := findContainerFacts(pod, c.Name)
		if !ok {
			return candidateEntry{}, false
		}
		if base, entry, found = prev.unchanged(c, facts); base == nil {
			base = newContainerEntry(facts)
		}
	}
	if !found {
		entry = base.entry(c)
	}
	d.mu.Lock()
	d.keepEntry(entry, p)
	d.mu.Unlock()
	return entry, true
}

// unchanged gives the container's part in d, and c's entry when one was
// built for the same history, if the container's facts are still facts;
// nothing when d is nil or they changed.
func (d *podDoc) unchanged(c *ContainerCandidate, facts containerFacts) (*containerEntry, candidateEntry, bool) {
	if d == nil {
		return nil, candidateEntry{}, false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	base, entry, found := d.entryFor(c)
	if base == nil || base.facts != facts {
		return nil, candidateEntry{}, false
	}
	return base, entry, found
}

// part gives the container's part of its entry in this document, nil if
// none was built. d.mu is held.
func (d *podDoc) part(name string) *containerEntry {
	for _, e := range d.containers {
		if e.facts.name == name {
			return e
		}
	}
	return nil
}

// entryFor gives the container's part of c's entry in this document, and
// c's entry if one was made for the same history. d.mu is held.
func (d *podDoc) entryFor(c *ContainerCandidate) (*containerEntry, candidateEntry, bool) {
	base := d.part(c.Name)
	if base == nil {
		return nil, candidateEntry{}, false
	}
	for _, e := range d.candidates {
		if e.base == base && e.sameHistory(c) {
			return base, e, true
		}
	}
	return base, candidateEntry{}, false
}

// keepEntry records the container's part and e as the entry program p
// took last of the container. d.mu is held.
//
// Each program has its own history of a container (its recreations, its
// signals), and several may evaluate the pod in one pass: the document
// keeps, once, the entry each of them took last, so that none makes its
// own again each pass (and its kept results still apply). e takes the place of the one p took before, which
// p's history has left behind (a memory window gains a sample each pass);
// an entry programs shared stays until the last to take it moves on.
func (d *podDoc) keepEntry(e candidateEntry, p *Program) {
	name := e.base.facts.name
	if i := slices.IndexFunc(d.containers, func(x *containerEntry) bool { return x.facts.name == name }); i >= 0 {
		d.containers[i] = e.base
	} else {
		d.containers = append(d.containers, e.base)
	}
	// Entries made on another part of the container, which entryFor
	// finds no more, go too, and those of programs retired (a policy's
	// older generation, a policy deleted).
	d.candidates = slices.DeleteFunc(d.candidates, func(x candidateEntry) bool {
		return x.id == e.id || x.program.retired.Load() || x.base.facts.name == name && (x.program == p || x.base != e.base)
	})
	if len(d.candidates) >= maxPrograms*len(d.containers) {
		// Programs come and go (a policy's next generation is a new
		// one): the entry taken longest ago makes room.
		d.candidates = slices.Delete(d.candidates, 0, 1)
	}
	e.program = p
	d.candidates = append(d.candidates, e)
}

// PodCache keeps, for each pod, its converted document per resourceVersion,
// so that a pod that did not change is not converted again, and one that
// changed only where it changed; and, apart from it, what each program's
// rules last said of the pod (podResults). Safe for concurrent use.
type PodCache struct {
	mu      sync.Mutex
	entries map[types.UID]*cachedPod
	limit   int
}

// cachedPod is a pod's document for its latest resourceVersion and the
// programs' results, which outlive resourceVersions.
type cachedPod struct {
	doc     *podDoc
	results *podResults
}

// NewPodCache returns a cache of at most limit pods (0 means 100,000).
func NewPodCache(limit int) *PodCache {
	if limit <= 0 {
		limit = 100_000
	}
	return &PodCache{entries: map[types.UID]*cachedPod{}, limit: limit}
}

// Forget drops a pod, for example once it is deleted.
func (c *PodCache) Forget(uid types.UID) {
	c.mu.Lock()
	delete(c.entries, uid)
	c.mu.Unlock()
}

// dropRetired drops what the pod keeps for retired programs, and the pod
// once it keeps no live program's results: a program that keeps nothing
// of its pods (Program.judgeAlone) would otherwise leave what the policy's
// former rules kept until the pod goes.
func (c *PodCache) dropRetired(uid types.UID) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[uid]
	if e == nil {
		return
	}
	e.results.mu.Lock()
	e.results.dropRetired()
	live := len(e.results.byProgram) > 0
	e.results.mu.Unlock()
	if !live {
		delete(c.entries, uid)
	}
}

// Len is the number of pods cached.
func (c *PodCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// cached returns the pod's document for its resourceVersion, started from the
// one before, and the programs' results for the pod.
func (c *PodCache) cached(pod *corev1.Pod) (*podDoc, *podResults) {
	if c == nil || pod.UID == "" || pod.ResourceVersion == "" {
		return &podDoc{resourceVersion: pod.ResourceVersion}, &podResults{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.entries[pod.UID]
	if old != nil && old.doc.resourceVersion == pod.ResourceVersion {
		return old.doc, old.results
	}
	d := &podDoc{resourceVersion: pod.ResourceVersion}
	results := &podResults{}
	if old != nil {
		old.doc.dropPrevious()
		d.prev, results = old.doc, old.results
	}
	if len(c.entries) >= c.limit {
		// Over the limit the cache starts afresh rather than tracking
		// recency on every hit; the limit is far above a manager's pods.
		clear(c.entries)
	}
	c.entries[pod.UID] = &cachedPod{doc: d, results: results}
	return d, results
}
