package policy

import (
	"cmp"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
	corev1 "k8s.io/api/core/v1"

	"github.com/rejuv-dev/rejuv/api/pods"
)

// NativeRule is a built-in rule's twin in Go: it judges one candidate
// container as the rule's Rego module judges its input.containers entry,
// with the same reasons, so that a memory rule, which every sample of
// every window evaluates again, costs comparisons rather than the Rego
// evaluator's steps. The module stays the rule's definition: it is still
// compiled and checked, and the rules package's tests hold the twin to it.
// A rule with a twin must judge each container on its own and read no
// time (see perContainer and timeless).
type NativeRule interface {
	// Judge returns the reason to recreate c (recreate false when the
	// rule's recreate set does not name it) and the signals the rule's
	// no_data set names for it.
	Judge(c *NativeContainer) (reason string, recreate bool, noData []string)
}

// NativeContainer is what a native rule reads of a candidate container's
// input.containers entry.
type NativeContainer struct {
	Name string
	// Memory is the entry's memory window; nil when it is null.
	Memory *MemoryWindow
	// MemoryLimit is resources.limits.memory in bytes when HasMemoryLimit.
	HasMemoryLimit bool
	MemoryLimit    int64
	// LastTermination is set when the entry's lastTermination is not null:
	// its reason, and its start and end in Unix nanoseconds (0 when the
	// status does not say).
	LastTermination *NativeTermination
}

// NativeTermination is an entry's lastTermination.
type NativeTermination struct {
	Reason                string
	StartedAt, FinishedAt int64
}

// nativeContainer is what a native rule reads of the candidate's entry.
func (e *candidateEntry) nativeContainer() *NativeContainer {
	return nativeContainerOf(&e.base.facts, &e.candidate)
}

// nativeContainerOf is what a native rule reads of the entry that the
// container's facts and the candidate make.
func nativeContainerOf(f *containerFacts, candidate *ContainerCandidate) *NativeContainer {
	c := &NativeContainer{Name: candidate.Name, Memory: candidate.Memory, HasMemoryLimit: f.limits.hasMemory, MemoryLimit: f.limits.memory}
	if f.hasStatus && f.terminated {
		c.LastTermination = &NativeTermination{Reason: f.lastReason, StartedAt: f.lastStarted, FinishedAt: f.lastFinished}
	}
	return c
}

// nativeContainerIn is what a native rule reads of candidate c of pod, as
// the entry of its facts (findContainerFacts) says it, reading only those
// facts; false when the pod has no such container.
func nativeContainerIn(pod *corev1.Pod, c *ContainerCandidate) (*NativeContainer, bool) {
	var st *corev1.ContainerStatus
	found := pods.FindContainer(pod, c.Name)
	switch found.Kind {
	case pods.ContainerRegular:
		st = pods.StatusIn(pod.Status.ContainerStatuses, c.Name)
	case pods.ContainerSidecar:
		st = pods.StatusIn(pod.Status.InitContainerStatuses, c.Name)
	default:
		return nil, false
	}
	out := &NativeContainer{Name: c.Name, Memory: c.Memory}
	if q, ok := found.Spec.Resources.Limits[corev1.ResourceMemory]; ok {
		out.HasMemoryLimit, out.MemoryLimit = true, q.Value()
	}
	if st != nil {
		if t := st.LastTerminationState.Terminated; t != nil {
			out.LastTermination = &NativeTermination{Reason: t.Reason, StartedAt: unixNano(t.StartedAt.Time), FinishedAt: unixNano(t.FinishedAt.Time)}
		}
	}
	return out, true
}

// judgeAlone evaluates a program whose every rule has its twin: from the
// pod and the candidates as they are, keeping nothing of the pod (no
// converted document, no entries, no results), since judging again costs
// less than what keeping them would (the engine's memory a pod).
func (p *Program) judgeAlone(t Target) ([]RuleResult, error) {
	containers := make([]*NativeContainer, len(t.Containers))
	names := make(candidateNames, len(t.Containers))
	for i := range t.Containers {
		c := &t.Containers[i]
		n, ok := nativeContainerIn(t.Pod, c)
		if !ok {
			return nil, fmt.Errorf("evaluate policy %s for pod %s/%s: container %q is not in the pod", p.ref, t.Pod.Namespace, t.Pod.Name, c.Name)
		}
		containers[i], names[i] = n, c.Name
	}
	results := make([]RuleResult, len(p.rules))
	for i, r := range p.rules {
		res := RuleResult{Rule: r.name}
		if names.unique() {
			res.Matches, res.NoData = r.judgeEach(containers)
		} else {
			// Sets whose elements name one container twice: as the
			// module's would be read.
			recreate, noData := r.judge(containers)
			if err := readResults(recreate, noData, names, &res); err != nil {
				res.Err = &EvalError{Policy: p.ref.String(), Rule: r.name, Pod: t.Pod.Namespace + "/" + t.Pod.Name, Err: err}
			}
		}
		results[i] = res
	}
	return results, nil
}

// judgeEach is what reading the rule's sets over containers, whose names
// are unique, gives: a match per container it recreates and the signals
// it has no data of, each in the sets' order (by container, then by
// signal).
func (r *compiledRule) judgeEach(containers []*NativeContainer) ([]Match, []NoData) {
	var matches []Match
	var noData []NoData
	for _, c := range containers {
		reason, ok, signals := r.native.Judge(c)
		if ok {
			matches = append(matches, Match{Container: c.Name, Reason: reason})
		}
		for _, s := range signals {
			noData = append(noData, NoData{Container: c.Name, Signal: s})
		}
	}
	slices.SortFunc(matches, func(a, b Match) int { return strings.Compare(a.Container, b.Container) })
	slices.SortFunc(noData, func(a, b NoData) int {
		return cmp.Or(strings.Compare(a.Container, b.Container), strings.Compare(a.Signal, b.Signal))
	})
	return matches, noData
}

// judgeNative binds each native rule's sets in b, as the combined query
// binds the other rules': the elements for the candidates of entries (the
// indexes of in.entries) alone.
func (p *Program) judgeNative(b topdown.QueryResult, in *podInput, entries []int) topdown.QueryResult {
	if !p.hasNative {
		return b
	}
	if b == nil {
		b = topdown.QueryResult{}
	}
	containers := in.nativeContainers(entries)
	for _, r := range p.rules {
		if r.native == nil {
			continue
		}
		recreate, noData := r.judge(containers)
		b[ast.Var(r.recreateVar)], b[ast.Var(r.noDataVar)] = recreate, noData
	}
	return b
}

// judge is the rule's recreate and no_data sets over containers, as its
// module yields them.
func (r *compiledRule) judge(containers []*NativeContainer) (recreate, noData *ast.Term) {
	var matches, missing []*ast.Term
	for _, c := range containers {
		reason, ok, signals := r.native.Judge(c)
		name := ast.StringTerm(c.Name)
		if ok {
			matches = append(matches, ast.ObjectTerm([2]*ast.Term{keyContainer, name}, [2]*ast.Term{keyReason, ast.StringTerm(reason)}))
		}
		for _, s := range signals {
			missing = append(missing, ast.ObjectTerm([2]*ast.Term{keyContainer, name}, [2]*ast.Term{keySignal, ast.StringTerm(s)}))
		}
	}
	return ast.SetTerm(matches...), ast.SetTerm(missing...)
}

// FormatNumberOf is rejuv.format_number of x, for native rules.
func FormatNumberOf(x float64) string { return formatFloat(x, fastNumber, formatNumber) }

// FormatBytesOf is rejuv.format_bytes of x, for native rules.
func FormatBytesOf(x float64) string { return formatFloat(x, fastBytes, formatBytes) }

// FormatDurationOf is rejuv.format_duration of x seconds, for native
// rules.
func FormatDurationOf(x float64) string { return formatFloat(x, fastDuration, formatDuration) }

// formatFloat formats x as the built-in formats the number x is written
// as in a Rego value: fast, or exactly when x is near a half.
func formatFloat(x float64, fast func(float64) (string, bool), exact func(*big.Rat) string) string {
	if text, ok := fast(x); ok {
		return text
	}
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(x, 'g', -1, 64))
	if !ok {
		// Not finite: what the Rego's arithmetic would have refused.
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return exact(r)
}
