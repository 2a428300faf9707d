package policy

import (
	"fmt"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	corev1 "k8s.io/api/core/v1"
)

// Target is one pod to evaluate and what is known of its candidate
// containers beyond the pod object.
type Target struct {
	Pod *corev1.Pod
	// Containers are the candidate containers, in the order rules see them.
	Containers []ContainerCandidate
	// Signals are the values of the policy's named queries for this pod;
	// absent names are absent from input.signals.
	Signals map[string]float64
}

// ContainerCandidate is a container a policy may recreate, with the history the
// manager keeps for it.
type ContainerCandidate struct {
	Name string
	// NotReadySince is when the manager first saw the container not ready;
	// zero when it is ready or nothing was seen.
	NotReadySince time.Time
	// Memory is the working-set window, nil when no metrics source has one.
	Memory *MemoryWindow
	// Signals are the values of the policy's named queries for this
	// container; absent names are absent from its signals.
	Signals map[string]float64
	// Recreations counts Rejuv's recreations of this container.
	Recreations int
	// LastRecreation is when Rejuv last recreated it; zero for never.
	LastRecreation time.Time
}

// MemoryWindow summarises a container's working set over the observation
// window: the newest value, a least-squares line through the samples, the
// slopes of a least-squares parabola through them at the window's oldest
// sample (start) and newest (end), and the slope of the line through the
// samples of its last sixth (latest).
type MemoryWindow struct {
	WorkingSetBytes           int64
	Samples                   int
	WindowSeconds             float64
	SlopeBytesPerSecond       float64
	R2                        float64
	StartSlopeBytesPerSecond  float64
	EndSlopeBytesPerSecond    float64
	LatestSlopeBytesPerSecond float64
}

// signalsTerm is a signals object: each name with its value.
func signalsTerm(values map[string]float64) *ast.Term {
	if len(values) == 0 {
		return noSignals
	}
	obj := ast.NewObjectWithCapacity(len(values))
	for name, v := range values {
		obj.Insert(ast.StringTerm(name), ast.FloatNumberTerm(v))
	}
	return ast.NewTerm(obj)
}

// podInput is a pod's part of the input document, which every rule of a
// program shares: input.pod, input.containers and input.signals.
type podInput struct {
	// target is what the input is made of.
	target Target
	// doc keeps the conversion for the pod's next evaluation; results
	// are what the programs said of the pod before.
	doc     *podDoc
	results *podResults
	pod     *ast.Term
	// entries are the candidates' entries, in order; containers their
	// terms, each built once an evaluation needs it (containerTerm).
	entries    []candidateEntry
	containers []*ast.Term
	names      candidateNames
	signals    *ast.Term
}

// inputOf converts the target in one pass: input.pod holds the fields of
// the pod that the program's rules read, input.containers an entry per
// candidate (the container as the pod says it, then the manager's history
// of it), input.signals the pod's signal values. A part the pod's cached
// document already holds is taken from it, see podDoc; the entries' terms
// are built only when the results kept of the pod do not apply.
func (p *Program) inputOf(t Target) (podInput, error) {
	doc, results := p.opts.Pods.cached(t.Pod)
	in := podInput{
		target:     t,
		doc:        doc,
		results:    results,
		entries:    make([]candidateEntry, 0, len(t.Containers)),
		containers: make([]*ast.Term, len(t.Containers)),
		names:      make(candidateNames, 0, len(t.Containers)),
		signals:    signalsTerm(t.Signals),
	}
	var err error
	if in.pod, err = doc.podValue(t.Pod, p.shape); err != nil {
		return in, err
	}
	for i := range t.Containers {
		c := &t.Containers[i]
		entry, ok := doc.entryOf(t.Pod, c, p)
		if !ok {
			return in, fmt.Errorf("container %q is not in the pod", c.Name)
		}
		in.entries = append(in.entries, entry)
		in.names = append(in.names, c.Name)
	}
	return in, nil
}

// containerTerm is the term of the i-th candidate's entry, built once.
func (in *podInput) containerTerm(i int) *ast.Term {
	if in.containers[i] == nil {
		in.containers[i] = in.entries[i].term()
	}
	return in.containers[i]
}

// containerTerms are the terms of every candidate's entry.
func (in *podInput) containerTerms() []*ast.Term {
	for i := range in.entries {
		in.containerTerm(i)
	}
	return in.containers
}

// document is the input document at now, without parameters, with
// containers as input.containers.
func (in *podInput) document(now time.Time, policy *ast.Term, containers []*ast.Term) [][2]*ast.Term {
	return [][2]*ast.Term{
		{keyPod, in.pod},
		{keyContainers, ast.ArrayTerm(containers...)},
		{keySignals, in.signals},
		{keyNow, ast.StringTerm(now.UTC().Format(time.RFC3339Nano))},
		{keyPolicy, policy},
	}
}

// entryIDs are the candidates' entries by identity, which what the no-data
// results depend on besides the pod and the signals.
func (in *podInput) entryIDs() []*entryID {
	ids := make([]*entryID, len(in.entries))
	for i := range in.entries {
		ids[i] = in.entries[i].id
	}
	return ids
}
