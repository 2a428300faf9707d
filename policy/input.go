package policy

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Target is one pod to evaluate and what is known of its candidate
// containers beyond the pod object.
type Target struct {
	Pod *corev1.Pod
	// Containers are the candidate containers, in the order rules see them.
	Containers []Candidate
	// Signals are the values of the policy's named queries for this pod;
	// absent names are absent from input.signals.
	Signals map[string]float64
}

// Candidate is a container a policy may recreate, with the history the
// manager keeps for it.
type Candidate struct {
	Name string
	// NotReadySince is when the manager first saw the container not ready;
	// zero when it is ready or nothing was seen.
	NotReadySince time.Time
	// Memory is the working-set window, nil when no metrics source has one.
	Memory *MemoryWindow
	// Recreations counts Rejuv's recreations of this container.
	Recreations int
	// LastRecreation is when Rejuv last recreated it; zero for never.
	LastRecreation time.Time
}

// MemoryWindow summarises a container's working set over the observation
// window: the newest value and a least-squares line through the samples.
type MemoryWindow struct {
	WorkingSetBytes     int64
	Samples             int
	WindowSeconds       float64
	SlopeBytesPerSecond float64
	R2                  float64
}

// podDoc is the converted, policy-independent part of a pod's input: the
// pod object and each container's fields taken from the pod, and the last
// full entry built for each candidate, reused while the manager's history
// of the container stays the same.
type podDoc struct {
	resourceVersion string
	containers      map[string][][2]*ast.Term

	mu sync.Mutex
	// pods holds the converted pod per shape (the fields some policy's
	// rules read), see podPaths.
	pods       map[string]*ast.Term
	candidates map[Candidate]*ast.Term
	noData     map[*Program]*noDataEntry
}

// noDataEntry is a program's no-data results for the candidates they were
// evaluated with.
type noDataEntry struct {
	candidates []*ast.Term
	results    [][]NoData
}

// noDataOf returns the program's no-data results for these candidates, if
// they were evaluated before. Candidate entries are shared while nothing
// changed, so comparing them by identity is enough.
func (d *podDoc) noDataOf(p *Program, candidates []*ast.Term) ([][]NoData, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	e := d.noData[p]
	if e == nil || len(e.candidates) != len(candidates) {
		return nil, false
	}
	for i, c := range candidates {
		if e.candidates[i] != c {
			return nil, false
		}
	}
	return e.results, true
}

func (d *podDoc) keepNoData(p *Program, candidates []*ast.Term, results [][]NoData) {
	d.mu.Lock()
	defer d.mu.Unlock()
	// A pod outlives programs (a policy's next generation is a new one):
	// start afresh rather than keep the results of old ones.
	if d.noData == nil || len(d.noData) >= 8 {
		d.noData = map[*Program]*noDataEntry{}
	}
	d.noData[p] = &noDataEntry{candidates: slices.Clone(candidates), results: results}
}

// podValue returns input.pod with the fields paths names.
func (d *podDoc) podValue(pod *corev1.Pod, paths *podPaths, shape string) (*ast.Term, error) {
	d.mu.Lock()
	t := d.pods[shape]
	d.mu.Unlock()
	if t != nil {
		return t, nil
	}
	// managedFields are large and of no use to rules.
	p := *pod
	p.ManagedFields = nil
	v, err := prunedValue(reflect.ValueOf(&p), paths)
	if err != nil {
		return nil, fmt.Errorf("convert pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	t = ast.NewTerm(v)
	d.mu.Lock()
	if d.pods == nil {
		d.pods = map[string]*ast.Term{}
	}
	d.pods[shape] = t
	d.mu.Unlock()
	return t, nil
}

// candidate returns the input.containers entry of c.
func (d *podDoc) candidate(pod *corev1.Pod, c *Candidate) (*ast.Term, bool) {
	d.mu.Lock()
	for k, t := range d.candidates {
		if k.sameAs(c) {
			d.mu.Unlock()
			return t, true
		}
	}
	base, ok := d.containers[c.Name]
	d.mu.Unlock()
	if !ok {
		// Only the containers some policy asks about are converted.
		if base, ok = findContainerDoc(pod, c.Name); !ok {
			return nil, false
		}
	}
	key := *c
	if key.Memory != nil {
		// The window is compared by value, not by pointer.
		m := *key.Memory
		key.Memory = &m
	}
	t := candidateValue(base, c)
	d.mu.Lock()
	if d.containers == nil {
		d.containers = map[string][][2]*ast.Term{}
	}
	d.containers[c.Name] = base
	if d.candidates == nil || len(d.candidates) >= 2*len(d.containers) {
		d.candidates = make(map[Candidate]*ast.Term, len(d.containers))
	}
	d.candidates[key] = t
	d.mu.Unlock()
	return t, true
}

// sameAs reports whether c carries the same history as x.
func (c Candidate) sameAs(x *Candidate) bool {
	if c.Name != x.Name || !c.NotReadySince.Equal(x.NotReadySince) || c.Recreations != x.Recreations || !c.LastRecreation.Equal(x.LastRecreation) {
		return false
	}
	if c.Memory == nil || x.Memory == nil {
		return c.Memory == x.Memory
	}
	return *c.Memory == *x.Memory
}

// PodCache keeps each pod's converted document per resourceVersion, so that
// a pod that did not change is not converted again. Safe for concurrent use.
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
	if c != nil && pod.UID != "" && pod.ResourceVersion != "" {
		c.mu.Lock()
		d := c.entries[pod.UID]
		c.mu.Unlock()
		if d != nil && d.resourceVersion == pod.ResourceVersion {
			return d
		}
	}
	d := &podDoc{resourceVersion: pod.ResourceVersion}
	if c != nil && pod.UID != "" && pod.ResourceVersion != "" {
		c.mu.Lock()
		if len(c.entries) >= c.limit {
			// Over the limit the cache starts afresh rather than tracking
			// recency on every hit; the limit is far above a manager's pods.
			clear(c.entries)
		}
		c.entries[pod.UID] = d
		c.mu.Unlock()
	}
	return d
}

// Keys of input.containers entries.
var (
	keyName            = ast.StringTerm("name")
	keyKind            = ast.StringTerm("kind")
	keyImage           = ast.StringTerm("image")
	keyReady           = ast.StringTerm("ready")
	keyStarted         = ast.StringTerm("started")
	keyState           = ast.StringTerm("state")
	keyStartedAt       = ast.StringTerm("startedAt")
	keyRestartCount    = ast.StringTerm("restartCount")
	keyLastTermination = ast.StringTerm("lastTermination")
	keyResources       = ast.StringTerm("resources")
	keyNotReadySince   = ast.StringTerm("notReadySince")
	keyMemory          = ast.StringTerm("memory")
	keyRecreations     = ast.StringTerm("recreations")
)

// findContainerDoc gives the entry of the pod's container or sidecar name
// as far as the pod says; false when the pod has no such container (an
// init container that is not a sidecar does not count).
func findContainerDoc(pod *corev1.Pod, name string) ([][2]*ast.Term, bool) {
	for i := range pod.Spec.Containers {
		if c := &pod.Spec.Containers[i]; c.Name == name {
			return containerDoc(c, termContainer, findStatus(pod.Status.ContainerStatuses, name)), true
		}
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if c.Name == name && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			return containerDoc(c, termSidecar, findStatus(pod.Status.InitContainerStatuses, name)), true
		}
	}
	return nil, false
}

func findStatus(statuses []corev1.ContainerStatus, name string) *corev1.ContainerStatus {
	for i := range statuses {
		if statuses[i].Name == name {
			return &statuses[i]
		}
	}
	return nil
}

// Values shared by every entry.
var (
	termContainer  = ast.StringTerm("container")
	termSidecar    = ast.StringTerm("sidecar")
	termRunning    = ast.StringTerm("running")
	termWaiting    = ast.StringTerm("waiting")
	termTerminated = ast.StringTerm("terminated")
	termUnknown    = ast.StringTerm("unknown")
)

// containerDoc is a container's entry as far as the pod says, as key and
// value pairs: the candidate's entry adds the manager's history to them.
func containerDoc(c *corev1.Container, kind *ast.Term, st *corev1.ContainerStatus) [][2]*ast.Term {
	ready, started, state := ast.InternedTerm(false), ast.NullTerm(), termUnknown
	startedAt, restarts, last := ast.NullTerm(), ast.IntNumberTerm(0), ast.NullTerm()
	if st != nil {
		ready = ast.InternedTerm(st.Ready)
		if st.Started != nil {
			started = ast.InternedTerm(*st.Started)
		}
		switch {
		case st.State.Running != nil:
			state = termRunning
			startedAt = timeTerm(st.State.Running.StartedAt.Time)
		case st.State.Terminated != nil:
			state = termTerminated
		case st.State.Waiting != nil:
			state = termWaiting
		}
		restarts = ast.IntNumberTerm(int(st.RestartCount))
		if t := st.LastTerminationState.Terminated; t != nil {
			last = ast.ObjectTerm(
				[2]*ast.Term{ast.StringTerm("reason"), ast.StringTerm(t.Reason)},
				[2]*ast.Term{ast.StringTerm("exitCode"), ast.IntNumberTerm(int(t.ExitCode))},
				[2]*ast.Term{ast.StringTerm("finishedAt"), timeTerm(t.FinishedAt.Time)},
			)
		}
	}
	return [][2]*ast.Term{
		{keyName, ast.StringTerm(c.Name)},
		{keyKind, kind},
		{keyImage, ast.StringTerm(c.Image)},
		{keyResources, ast.NewTerm(resourcesValue(c.Resources))},
		{keyReady, ready},
		{keyStarted, started},
		{keyState, state},
		{keyStartedAt, startedAt},
		{keyRestartCount, restarts},
		{keyLastTermination, last},
	}
}

func resourcesValue(r corev1.ResourceRequirements) ast.Value {
	list := func(l corev1.ResourceList) *ast.Term {
		obj := ast.NewObjectWithCapacity(2)
		if q, ok := l[corev1.ResourceMemory]; ok {
			obj.Insert(ast.StringTerm("memory"), ast.NewTerm(ast.Number(strconv.FormatInt(q.Value(), 10))))
		}
		if q, ok := l[corev1.ResourceCPU]; ok {
			obj.Insert(ast.StringTerm("cpu"), ast.NewTerm(ast.Number(strconv.FormatInt(q.MilliValue(), 10))))
		}
		return ast.NewTerm(obj)
	}
	return ast.NewObject(
		[2]*ast.Term{ast.StringTerm("requests"), list(r.Requests)},
		[2]*ast.Term{ast.StringTerm("limits"), list(r.Limits)},
	)
}

func timeTerm(t time.Time) *ast.Term {
	if t.IsZero() {
		return ast.NullTerm()
	}
	return ast.StringTerm(t.UTC().Format(time.RFC3339Nano))
}

// candidateValue is the full input.containers entry: the pod's part and
// the manager's history of the container.
func candidateValue(base [][2]*ast.Term, c *Candidate) *ast.Term {
	pairs := make([][2]*ast.Term, 0, len(base)+3)
	pairs = append(pairs, base...)
	memory := ast.NullTerm()
	if m := c.Memory; m != nil {
		memory = ast.ObjectTerm(
			[2]*ast.Term{ast.StringTerm("workingSetBytes"), ast.NewTerm(ast.Number(strconv.FormatInt(m.WorkingSetBytes, 10)))},
			[2]*ast.Term{ast.StringTerm("samples"), ast.IntNumberTerm(m.Samples)},
			[2]*ast.Term{ast.StringTerm("windowSeconds"), ast.FloatNumberTerm(m.WindowSeconds)},
			[2]*ast.Term{ast.StringTerm("slopeBytesPerSecond"), ast.FloatNumberTerm(m.SlopeBytesPerSecond)},
			[2]*ast.Term{ast.StringTerm("r2"), ast.FloatNumberTerm(m.R2)},
		)
	}
	pairs = append(pairs,
		[2]*ast.Term{keyNotReadySince, timeTerm(c.NotReadySince)},
		[2]*ast.Term{keyMemory, memory},
		[2]*ast.Term{keyRecreations, ast.ObjectTerm(
			[2]*ast.Term{ast.StringTerm("total"), ast.IntNumberTerm(c.Recreations)},
			[2]*ast.Term{ast.StringTerm("last"), timeTerm(c.LastRecreation)},
		)},
	)
	return ast.ObjectTerm(pairs...)
}
