package policy

import (
	"cmp"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
	corev1 "k8s.io/api/core/v1"
)

// NativeRule is a built-in rule's twin in Go: it judges one candidate
// container as the rule's Rego module judges its input.containers entry,
// with the same reasons, so that a pod costs comparisons rather than the
// Rego evaluator's steps (a memory rule is evaluated again at every sample
// of every window). The module stays the rule's definition: it is still
// compiled and checked, and the twins' tests hold each twin to it. A rule
// with a twin judges each container on its own (see perContainer).
type NativeRule interface {
	// Judge is what the rule's recreate and no_data sets say of c at the
	// evaluation time now (input.now).
	Judge(c *NativeContainer, now time.Time) NativeVerdict
}

// NativeVerdict is what a rule's sets say of one container.
type NativeVerdict struct {
	// Recreate is set when the recreate set names the container, with
	// Reason, and Force when its element says "force": true.
	Recreate, Force bool
	Reason          string
	// NoData are the signals the no_data set names for it.
	NoData []string
}

// NativeContainer is what a native rule reads of a candidate container's
// input.containers entry and of input.pod.
type NativeContainer struct {
	Name string
	// PodUID is input.pod.metadata.uid.
	PodUID string
	// Ready, State ("running", "waiting", "terminated" or "unknown") and
	// RestartCount as the entry says them (false, "unknown" and 0 without
	// a status).
	Ready        bool
	State        string
	RestartCount int64
	// Started is -1 when the entry's started is null, else 0 or 1.
	Started int8
	// StartedAt and NotReadySince in Unix nanoseconds, 0 when null.
	StartedAt, NotReadySince int64
	// Recreations is recreations.total.
	Recreations int64
	// Memory is the entry's memory window; nil when it is null.
	Memory *MemoryWindow
	// MemoryLimit is resources.limits.memory in bytes when HasMemoryLimit.
	HasMemoryLimit bool
	MemoryLimit    int64
	// LastTermination is set when the entry's lastTermination is not null.
	LastTermination *NativeTermination
}

// NativeTermination is an entry's lastTermination: its start and end in
// Unix nanoseconds, 0 when null.
type NativeTermination struct {
	Reason                string
	ExitCode              int32
	StartedAt, FinishedAt int64
}

// nativeContainerIn is what a native rule reads of candidate c of pod: the
// container's facts (findContainerFacts), as its entry says them, and the
// candidate's history; false when the pod has no such container.
func nativeContainerIn(pod *corev1.Pod, c *ContainerCandidate) (*NativeContainer, bool) {
	f, ok := findContainerFacts(pod, c.Name)
	if !ok {
		return nil, false
	}
	out := &NativeContainer{
		Name: c.Name, PodUID: string(pod.UID), Ready: f.ready, State: string(stateTerms[f.state].Value.(ast.String)),
		RestartCount: int64(f.restarts), Started: f.started, StartedAt: f.startedAt, NotReadySince: unixNano(c.NotReadySince), Recreations: int64(c.Recreations), Memory: c.Memory,
		HasMemoryLimit: f.limits.hasMemory, MemoryLimit: f.limits.memory,
	}
	if f.hasStatus && f.terminated {
		out.LastTermination = &NativeTermination{Reason: f.lastReason, ExitCode: f.lastExitCode, StartedAt: f.lastStarted, FinishedAt: f.lastFinished}
	}
	return out, true
}

// judgeAlone evaluates a program whose every rule has its twin: from the
// pod and the candidates as they are, keeping nothing of the pod (no
// converted document, no entries, no results), since judging again costs
// less than what keeping them would (the engine's memory a pod).
func (p *Program) judgeAlone(t Target, now time.Time) ([]RuleResult, error) {
	p.opts.Pods.dropRetired(t.Pod.UID)
	containers, err := p.nativeContainers(t.Pod, t.Containers, nil)
	if err != nil {
		return nil, err
	}
	names := make(candidateNames, len(t.Containers))
	for i := range t.Containers {
		names[i] = t.Containers[i].Name
	}
	results := make([]RuleResult, len(p.rules))
	for i, r := range p.rules {
		res := RuleResult{Rule: r.name}
		if names.unique() {
			res.Matches, res.NoData = r.judgeEach(containers, now)
		} else {
			// Sets whose elements name one container twice: as the
			// module's would be read.
			recreate, noData := r.judge(containers, now)
			if err := readResults(recreate, noData, names, &res); err != nil {
				res.Err = &EvalError{Policy: p.ref.String(), Rule: r.name, Pod: t.Pod.Namespace + "/" + t.Pod.Name, Err: err}
			}
		}
		results[i] = res
	}
	return results, nil
}

// nativeContainers are what native rules read of the candidates of pod
// whose indexes are entries (all of them when nil).
func (p *Program) nativeContainers(pod *corev1.Pod, candidates []ContainerCandidate, entries []int) ([]*NativeContainer, error) {
	if entries == nil {
		entries = make([]int, len(candidates))
		for i := range entries {
			entries[i] = i
		}
	}
	out := make([]*NativeContainer, len(entries))
	for j, i := range entries {
		c, ok := nativeContainerIn(pod, &candidates[i])
		if !ok {
			return nil, fmt.Errorf("evaluate policy %s for pod %s/%s: container %q is not in the pod", p.ref, pod.Namespace, pod.Name, candidates[i].Name)
		}
		out[j] = c
	}
	return out, nil
}

// judgeEach is what reading the rule's sets over containers, whose names
// are unique, gives: a match per container it recreates and the signals
// it has no data of, each in the sets' order (by container, then by
// signal).
func (r *compiledRule) judgeEach(containers []*NativeContainer, now time.Time) ([]Match, []NoData) {
	var matches []Match
	var noData []NoData
	for _, c := range containers {
		v := r.native.Judge(c, now)
		if v.Recreate {
			matches = append(matches, Match{Container: c.Name, Reason: v.Reason, Force: v.Force})
		}
		for _, s := range v.NoData {
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
// indexes of the target's candidates) alone.
func (p *Program) judgeNative(b topdown.QueryResult, in *podInput, entries []int, now time.Time) (topdown.QueryResult, error) {
	if !p.hasNative {
		return b, nil
	}
	if b == nil {
		b = topdown.QueryResult{}
	}
	containers, err := p.nativeContainers(in.target.Pod, in.target.Containers, entries)
	if err != nil {
		return nil, err
	}
	for _, r := range p.rules {
		if r.native == nil {
			continue
		}
		recreate, noData := r.judge(containers, now)
		b[ast.Var(r.recreateVar)], b[ast.Var(r.noDataVar)] = recreate, noData
	}
	return b, nil
}

// judge is the rule's recreate and no_data sets over containers, as its
// module yields them.
func (r *compiledRule) judge(containers []*NativeContainer, now time.Time) (recreate, noData *ast.Term) {
	var matches, missing []*ast.Term
	for _, c := range containers {
		v := r.native.Judge(c, now)
		name := ast.StringTerm(c.Name)
		if v.Recreate {
			pairs := [][2]*ast.Term{{keyContainer, name}, {keyReason, ast.StringTerm(v.Reason)}}
			if v.Force {
				pairs = append(pairs, [2]*ast.Term{keyForce, ast.BooleanTerm(true)})
			}
			matches = append(matches, ast.ObjectTerm(pairs...))
		}
		for _, s := range v.NoData {
			missing = append(missing, ast.ObjectTerm([2]*ast.Term{keyContainer, name}, [2]*ast.Term{keySignal, ast.StringTerm(s)}))
		}
	}
	return ast.SetTerm(matches...), ast.SetTerm(missing...)
}

// FormatDurationNumber is rejuv.format_duration of the Rego number n, for
// native rules.
func FormatDurationNumber(n ast.Number) string {
	if text, ok := formatText(string(n), fastDuration, formatDuration); ok {
		return text
	}
	// Not finite: what the Rego's arithmetic would have refused.
	return string(n)
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
	n := strconv.FormatFloat(x, 'g', -1, 64)
	if text, ok := formatText(n, fast, exact); ok {
		return text
	}
	// Not finite: what the Rego's arithmetic would have refused.
	return n
}
