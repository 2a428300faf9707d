package policy

import (
	"maps"
	"slices"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
)

// keptResults are a program's no-data results for the pod, candidates'
// entries and signals they were evaluated with (each compared by identity:
// the shared empty signals object, or one built for that evaluation,
// which no later evaluation matches), and, for a program whose rules do
// not read the time (see Program.timeless), its matches too.
type keptResults struct {
	pod        *ast.Term
	candidates []*entryID
	signals    *ast.Term
	noData     [][]NoData
	// matches is nil unless the program is timeless.
	matches [][]Match
	// entries are, for a per-container program, what each candidate's
	// entry gave with this pod value and the signals (see
	// Program.evalChanged).
	entries map[*entryID]*entryVerdict
}

func (v *keptResults) sameInput(pod *ast.Term, candidates []*entryID, signals *ast.Term) bool {
	return v != nil && v.pod == pod && v.signals == signals && slices.Equal(v.candidates, candidates)
}

// maxPrograms is how many programs' results and entries a pod keeps, more
// than the policies that select one pod.
const maxPrograms = 8

// podResults are what each program's rules last said of one pod, and the
// converted parts they said it of. A pod's document hands the parts that
// did not change over to its next resourceVersion, so comparing the parts
// by identity tells whether results still apply.
type podResults struct {
	mu        sync.Mutex
	byProgram map[*Program]*keptResults
}

// kept returns the program's kept results for this pod value, these
// candidates' entries and these signals, nil if none were kept for them.
func (r *podResults) kept(p *Program, pod *ast.Term, candidates []*entryID, signals *ast.Term) *keptResults {
	r.mu.Lock()
	v := r.byProgram[p]
	if len(r.byProgram) > 1 {
		dropRetired(r.byProgram)
	}
	r.mu.Unlock()
	if !v.sameInput(pod, candidates, signals) {
		return nil
	}
	return v
}

// entryVerdicts returns what each candidate's entry gave the program with this
// pod value and these signals; nil if nothing was kept for them.
func (r *podResults) entryVerdicts(p *Program, pod, signals *ast.Term) map[*entryID]*entryVerdict {
	r.mu.Lock()
	v := r.byProgram[p]
	r.mu.Unlock()
	if v != nil && v.entries != nil && v.pod == pod && v.signals == signals {
		return v.entries
	}
	return nil
}

// keep keeps the program's results for the pod.
func (r *podResults) keep(p *Program, v *keptResults) {
	r.mu.Lock()
	defer r.mu.Unlock()
	// A pod outlives programs (a policy's next generation is a new one):
	// start afresh rather than keep the results of old ones.
	if r.byProgram == nil || len(r.byProgram) >= maxPrograms {
		r.byProgram = map[*Program]*keptResults{}
	}
	dropRetired(r.byProgram)
	r.byProgram[p] = v
}

// forget drops the program's results for the pod: once its rules are
// evaluated one by one, it keeps none, and what it kept before would
// hold the entries and the pod value they were kept for.
func (r *podResults) forget(p *Program) {
	r.mu.Lock()
	delete(r.byProgram, p)
	r.mu.Unlock()
}

// dropRetired drops the results of programs retired (see Program.retired).
func dropRetired(byProgram map[*Program]*keptResults) {
	maps.DeleteFunc(byProgram, func(q *Program, _ *keptResults) bool { return q.retired.Load() })
}
