package policy

import (
	"slices"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// podDoc is the converted, policy-independent part of a pod's input for
// one resourceVersion: the pod object per shape, each container's fields
// taken from the pod, the last full entry built for each candidate (reused
// while the manager's history of the container stays the same), and each
// program's kept results.
//
// A pod's next resourceVersion starts from the document before (prev): the
// parts that did not change are taken over instead of converted again, and
// with them the results they gave. Usually only a container or two
// changed.
type podDoc struct {
	resourceVersion string

	mu sync.Mutex
	// prev is the document of the resourceVersion before, until this one
	// has been evaluated once.
	prev *podDoc
	// pods holds the converted pod per shape (the fields some policy's
	// rules read), see podShape.
	pods map[string]*ast.Term
	// containers are the containers' parts, one per container name.
	containers  []*containerEntry
	candidates  []candidateEntry
	keptResults map[*Program]*keptResults
}

// candidateEntry is a candidate's full entry and the history it was built
// with, and the entry's history objects, for the container's next entry to
// take over (containerEntry.entry).
type candidateEntry struct {
	candidate           ContainerCandidate
	base                *containerEntry
	term                *ast.Term
	memory, recreations *ast.Term
}

// keptResults are a program's no-data results for the pod and candidates they
// were evaluated with, and, for a program whose rules do not read the time
// (see Program.timeless), its matches too.
type keptResults struct {
	pod        *ast.Term
	candidates []*ast.Term
	noData     [][]NoData
	// matches is nil unless the program is timeless.
	matches [][]Match
	// entries are, for a per-container program, what each candidate's
	// entry gave with this pod value and the signals (see
	// Program.evalChanged).
	entries map[*ast.Term]*entryVerdict
}

func (v *keptResults) sameInput(pod *ast.Term, candidates []*ast.Term) bool {
	return v != nil && v.pod == pod && slices.Equal(v.candidates, candidates)
}

// keptResultsOf returns the program's kept results for this pod and these
// candidates, if they were evaluated before, for this resourceVersion or,
// with the same converted parts, the one before; nil otherwise. Converted
// parts are shared while nothing changed, so comparing them by identity is
// enough.
func (d *podDoc) keptResultsOf(p *Program, pod *ast.Term, candidates []*ast.Term) *keptResults {
	d.mu.Lock()
	v, prev := d.keptResults[p], d.prev
	d.mu.Unlock()
	if v.sameInput(pod, candidates) {
		return v
	}
	if prev == nil {
		return nil
	}
	prev.mu.Lock()
	v = prev.keptResults[p]
	prev.mu.Unlock()
	if !v.sameInput(pod, candidates) {
		return nil
	}
	d.keepResults(p, v)
	return v
}

// entryVerdicts returns what each candidate's entry gave the program with
// this pod value and these signals, kept in this document or the one
// before; nil if nothing was.
func (d *podDoc) entryVerdicts(p *Program, pod, signals *ast.Term) map[*ast.Term]*entryVerdict {
	for _, doc := range []*podDoc{d, d.previous()} {
		if doc == nil {
			continue
		}
		doc.mu.Lock()
		v := doc.keptResults[p]
		doc.mu.Unlock()
		if v != nil && v.entries != nil && v.pod == pod && v.candidates[len(v.candidates)-1] == signals {
			return v.entries
		}
	}
	return nil
}

// keepResults keeps the program's results for the pod.
func (d *podDoc) keepResults(p *Program, v *keptResults) {
	d.mu.Lock()
	defer d.mu.Unlock()
	// A pod outlives programs (a policy's next generation is a new one):
	// start afresh rather than keep the results of old ones.
	if d.keptResults == nil || len(d.keptResults) >= 8 {
		d.keptResults = map[*Program]*keptResults{}
	}
	d.keptResults[p] = v
}

// dropPrevious lets go of the document before: once an evaluation took
// over what it could from it, and when a newer document takes this one's
// place (one document back at most).
func (d *podDoc) dropPrevious() {
	d.mu.Lock()
	d.prev = nil
	d.mu.Unlock()
}

func (d *podDoc) previous() *podDoc {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.prev
}

// pod returns input.pod of the shape: converted once per resourceVersion,
// and the previous resourceVersion's value when the fields the shape reads
// did not change (so that the no-data results kept with it still apply).
func (d *podDoc) pod(pod *corev1.Pod, shape *podShape) (*ast.Term, error) {
	d.mu.Lock()
	t, prev := d.pods[shape.key], d.prev
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
		if old := prev.pods[shape.key]; old != nil && ast.ValueEqual(old.Value, t.Value) {
			t = old
		}
		prev.mu.Unlock()
	}
	d.mu.Lock()
	if d.pods == nil {
		d.pods = map[string]*ast.Term{}
	}
	d.pods[shape.key] = t
	d.mu.Unlock()
	return t, nil
}

// container returns the input.containers entry of candidate c: the one
// built before for the same history, in this resourceVersion or, when the
// container's facts did not change, the one before; otherwise one built
// from the container's facts and c's history, taking over what did not
// change from the container's part and entry before. False when the pod
// has no such container.
func (d *podDoc) container(pod *corev1.Pod, c *ContainerCandidate) (*ast.Term, bool) {
	d.mu.Lock()
	base, entry, found := d.entryFor(c)
	before, hasBefore := d.latest(c.Name)
	prev := d.prev
	d.mu.Unlock()
	if found {
		return entry.term, true
	}
	if base == nil {
		facts, ok := findContainerFacts(pod, c.Name)
		if !ok {
			return nil, false
		}
		var old *containerEntry
		if prev != nil {
			prev.mu.Lock()
			var oldEntry candidateEntry
			if old, oldEntry, found = prev.entryFor(c); old != nil && old.facts == facts {
				base, entry = old, oldEntry
			} else {
				found = false
			}
			if !hasBefore {
				before, hasBefore = prev.latest(c.Name)
			}
			prev.mu.Unlock()
		}
		if base == nil {
			base = newContainerEntry(facts, old)
		}
	}
	if !found {
		var from *candidateEntry
		if hasBefore {
			from = &before
		}
		entry = base.entry(c, from)
	}
	d.mu.Lock()
	d.keep(entry)
	d.mu.Unlock()
	return entry.term, true
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
// c's full entry if one was built for the same history. d.mu is held.
func (d *podDoc) entryFor(c *ContainerCandidate) (*containerEntry, candidateEntry, bool) {
	base := d.part(c.Name)
	if base == nil {
		return nil, candidateEntry{}, false
	}
	for _, e := range d.candidates {
		if e.base == base && e.candidate.sameAs(c) {
			return base, e, true
		}
	}
	return base, candidateEntry{}, false
}

// latest gives the newest entry built for the container name in this
// document. d.mu is held.
func (d *podDoc) latest(name string) (candidateEntry, bool) {
	for _, e := range slices.Backward(d.candidates) {
		if e.candidate.Name == name {
			return e, true
		}
	}
	return candidateEntry{}, false
}

// keep records the container's part and a candidate's full entry. d.mu is
// held.
func (d *podDoc) keep(e candidateEntry) {
	if i := slices.IndexFunc(d.containers, func(x *containerEntry) bool { return x.facts.name == e.base.facts.name }); i >= 0 {
		d.containers[i] = e.base
	} else {
		d.containers = append(d.containers, e.base)
	}
	if len(d.candidates) >= 2*len(d.containers) {
		// Histories change over time: keep the recent ones.
		d.candidates = slices.Delete(d.candidates, 0, len(d.candidates)-len(d.containers))
	}
	d.candidates = append(d.candidates, e)
}

// PodCache keeps each pod's converted document per resourceVersion, so that
// a pod that did not change is not converted again, and one that changed
// only where it changed. Safe for concurrent use.
type PodCache struct {
	mu      sync.Mutex
	entries map[types.UID]*podDoc
	limit   int
}

// NewPodCache returns a cache of at most limit pods (0 means 100,000).
func NewPodCache(limit int) *PodCache {
	if limit <= 0 {
		limit = 100_000
	}
	return &PodCache{entries: map[types.UID]*podDoc{}, limit: limit}
}

// Forget drops a pod, for example once it is deleted.
func (c *PodCache) Forget(uid types.UID) {
	c.mu.Lock()
	delete(c.entries, uid)
	c.mu.Unlock()
}

// Len is the number of pods cached.
func (c *PodCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

func (c *PodCache) doc(pod *corev1.Pod) *podDoc {
	if c == nil || pod.UID == "" || pod.ResourceVersion == "" {
		return &podDoc{resourceVersion: pod.ResourceVersion}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.entries[pod.UID]
	if old != nil && old.resourceVersion == pod.ResourceVersion {
		return old
	}
	d := &podDoc{resourceVersion: pod.ResourceVersion}
	if old != nil {
		old.dropPrevious()
		d.prev = old
	}
	if len(c.entries) >= c.limit {
		// Over the limit the cache starts afresh rather than tracking
		// recency on every hit; the limit is far above a manager's pods.
		clear(c.entries)
	}
	c.entries[pod.UID] = d
	return d
}
