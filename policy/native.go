package policy

import (
	"math/big"
	"strconv"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
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
	Reason                 string
	StartedAt, FinishedAt int64
}

// nativeContainer is what a native rule reads of the candidate's entry.
func (e *candidateEntry) nativeContainer() *NativeContainer {
	f := &e.base.facts
	c := &NativeContainer{Name: e.candidate.Name, Memory: e.candidate.Memory, HasMemoryLimit: f.limits.hasMemory, MemoryLimit: f.limits.memory}
	if f.hasStatus && f.terminated {
		c.LastTermination = &NativeTermination{Reason: f.lastReason, StartedAt: f.lastStarted, FinishedAt: f.lastFinished}
	}
	return c
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
