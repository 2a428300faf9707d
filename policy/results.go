package policy

import (
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
	program    *Program
	pod        *ast.Term
	candidates []*entryID
	signals    *ast.Term
	noData     [][]NoData
	// matches is nil unless the program is timeless.
	matches [][]Match
	// verdicts are, for a per-container program, what each candidate's
	// entry gave with this pod value and the signals, in the order of
	// candidates (see Program.evalChanged).
	verdicts []*entryVerdict
}

func (v *keptResults) sameInput(pod *ast.Term, candidates []*entryID, signals *ast.Term) bool {
	return v != nil && v.pod == pod && v.signals == signals && slices.Equal(v.candidates, candidates)
}

// verdictOf is what the entry gave, nil when it is not among the
// candidates the verdicts were kept for.
func (v *keptResults) verdictOf(id *entryID) *entryVerdict {
	if v == nil {
		return nil
	}
	if i := slices.Index(v.candidates, id); i >= 0 {
		return v.verdicts[i]
	}
	return nil
}

// maxPrograms is how many programs' results and entries a pod keeps, more
// than the policies that select one pod.
const maxPrograms = 8

// podResults are what each program's rules last said of one pod, and the
// converted parts they said it of. A pod's document hands the parts that
// did not change over to its next resourceVersion, so comparing the parts
// by identity tells whether results still apply.
type podResults struct {
	mu sync.Mutex
	// byProgram holds each program's latest, one per program (a slice:
	// one to three programs evaluate most pods).
	byProgram []*keptResults
}

// of is the program's latest results. r.mu is held.
func (r *podResults) of(p *Program) *keptResults {
	for _, v := range r.byProgram {
		if v.program == p {
			return v
		}
	}
	return nil
}

// kept returns the program's kept results for this pod value, these
// candidates' entries and these signals, nil if none were kept for them.
func (r *podResults) kept(p *Program, pod *ast.Term, candidates []*entryID, signals *ast.Term) *keptResults {
	r.mu.Lock()
	v := r.of(p)
	if len(r.byProgram) > 1 {
		r.dropRetired()
	}
	r.mu.Unlock()
	if !v.sameInput(pod, candidates, signals) {
		return nil
	}
	return v
}

// entryVerdicts returns the program's kept results whose verdicts per
// entry were kept with this pod value and these signals; nil if none.
func (r *podResults) entryVerdicts(p *Program, pod, signals *ast.Term) *keptResults {
	r.mu.Lock()
	v := r.of(p)
	r.mu.Unlock()
	if v != nil && v.verdicts != nil && v.pod == pod && v.signals == signals {
		return v
	}
	return nil
}

// keep keeps the program's results for the pod, in place of its latest.
func (r *podResults) keep(p *Program, v *keptResults) {
	v.program = p
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dropRetired()
	r.byProgram = slices.DeleteFunc(r.byProgram, func(x *keptResults) bool { return x.program == p })
	if len(r.byProgram) >= maxPrograms {
		// A pod outlives programs (a policy's next generation is a new
		// one): the oldest makes room.
		r.byProgram = slices.Delete(r.byProgram, 0, 1)
	}
	r.byProgram = append(r.byProgram, v)
}

// forget drops the program's results for the pod: once its rules are
// evaluated one by one, it keeps none, and what it kept before would
// hold the entries and the pod value it was kept with.
func (r *podResults) forget(p *Program) {
	r.mu.Lock()
	r.byProgram = slices.DeleteFunc(r.byProgram, func(x *keptResults) bool { return x.program == p })
	r.mu.Unlock()
}

// dropRetired drops the results of programs retired (see
// Program.retired). r.mu is held.
func (r *podResults) dropRetired() {
	r.byProgram = slices.DeleteFunc(r.byProgram, func(x *keptResults) bool { return x.program.retired.Load() })
}
