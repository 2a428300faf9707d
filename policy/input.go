package policy

import (
	"maps"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	corev1 "k8s.io/api/core/v1"
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
	// Signals are the values of the policy's named queries for this
	// container; absent names are absent from its signals.
	Signals map[string]float64
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

// sameAs reports whether c carries the same history as x.
func (c Candidate) sameAs(x *Candidate) bool {
	if c.Name != x.Name || !c.NotReadySince.Equal(x.NotReadySince) || c.Recreations != x.Recreations || !c.LastRecreation.Equal(x.LastRecreation) ||
		!maps.Equal(c.Signals, x.Signals) {
		return false
	}
	if c.Memory == nil || x.Memory == nil {
		return c.Memory == x.Memory
	}
	return *c.Memory == *x.Memory
}

// candidateValue is the full input.containers entry: the pod's part and
// the manager's history of the container.
func candidateValue(base [][2]*ast.Term, c *Candidate) *ast.Term {
	pairs := make([][2]*ast.Term, 0, len(base)+4)
	pairs = append(pairs, base...)
	memory := ast.NullTerm()
	if m := c.Memory; m != nil {
		memory = ast.ObjectTerm(
			[2]*ast.Term{keyWorkingSetBytes, intTerm(m.WorkingSetBytes)},
			[2]*ast.Term{keySamples, ast.IntNumberTerm(m.Samples)},
			[2]*ast.Term{keyWindowSeconds, ast.FloatNumberTerm(m.WindowSeconds)},
			[2]*ast.Term{keySlopeBytesPerSecond, ast.FloatNumberTerm(m.SlopeBytesPerSecond)},
			[2]*ast.Term{keyR2, ast.FloatNumberTerm(m.R2)},
		)
	}
	pairs = append(pairs,
		[2]*ast.Term{keyNotReadySince, timeTerm(c.NotReadySince)},
		[2]*ast.Term{keyMemory, memory},
		[2]*ast.Term{keySignals, signalsTerm(c.Signals)},
		[2]*ast.Term{keyRecreations, ast.ObjectTerm(
			[2]*ast.Term{keyTotal, ast.IntNumberTerm(c.Recreations)},
			[2]*ast.Term{keyLast, timeTerm(c.LastRecreation)},
		)},
	)
	return ast.ObjectTerm(pairs...)
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
