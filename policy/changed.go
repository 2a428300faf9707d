package policy

import (
	"context"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// entryVerdict is what one candidate's entry gave each rule of a
// per-container program: the elements of its recreate and no_data sets,
// all of which name that candidate.
type entryVerdict struct {
	recreate, noData [][]*ast.Term
}

// evalChanged evaluates a per-container program whose rules read no time
// (see perContainer and timeless) for the candidates whose entries gave
// nothing yet with this pod value and these signals, and takes the other
// candidates' elements from before: a pod whose app container restarted
// costs the evaluation of that container alone. The rules' sets are the
// union of what each entry gave. False when the elements could not be told
// apart by container: then the pod is evaluated whole. ids are the
// candidates' entries (podInput.entryIDs).
func (p *Program) evalChanged(ctx context.Context, ids []*entryID, now time.Time, pod string, in *podInput, results []RuleResult) (bool, error) {
	prior := in.results.entryVerdicts(p, in.pod, in.signals)
	verdicts := make([]*entryVerdict, len(ids))
	var changed []int
	for i, id := range ids {
		if verdicts[i] = prior.verdictOf(id); verdicts[i] == nil {
			changed = append(changed, i)
		}
	}
	if len(changed) > 0 {
		var b topdown.QueryResult
		if p.combined.both != nil {
			terms := make([]*ast.Term, len(changed))
			for j, i := range changed {
				terms[j] = in.containerTerm(i)
			}
			input := ast.NewObject(in.document(now, p.policyTerm, terms)...)
			var err error
			if b, err = p.eval(ctx, p.combined.both, &p.combined.greedy, input, now, printHook{p: p, pod: pod}, p.combined.instants); err != nil {
				return true, err
			}
		}
		b, err := p.judgeNative(b, in, changed, now)
		if err != nil {
			return true, err
		}
		if !p.splitByEntry(b, in, changed, verdicts) {
			return false, nil
		}
	}
	v := &keptResults{pod: in.pod, candidates: ids, signals: in.signals, noData: make([][]NoData, len(p.rules)), matches: make([][]Match, len(p.rules)), verdicts: verdicts}
	complete := true
	for i, r := range p.rules {
		var recreate, noData []*ast.Term
		for _, v := range verdicts {
			recreate = append(recreate, v.recreate[i]...)
			noData = append(noData, v.noData[i]...)
		}
		res := RuleResult{Rule: r.name}
		var err error
		res.Matches, err = readMatches(ast.SetTerm(recreate...), in.names)
		if err == nil {
			v.noData[i], err = readNoData(ast.SetTerm(noData...))
		}
		if err != nil {
			complete = false
			res.Matches = nil
			res.Err = &EvalError{Policy: p.ref.String(), Rule: r.name, Pod: pod, Err: err}
		} else {
			res.NoData, v.matches[i] = v.noData[i], res.Matches
		}
		results[i] = res
	}
	if complete {
		in.results.keep(p, v)
	}
	return true, nil
}

// splitByEntry gives each changed candidate's entry (changed holds their
// indexes in in.entries) the elements that name it, in verdicts at the same
// index; false when an element names none of them.
func (p *Program) splitByEntry(b topdown.QueryResult, in *podInput, changed []int, verdicts []*entryVerdict) bool {
	byName := make(map[string]*entryVerdict, len(changed))
	for _, i := range changed {
		v := &entryVerdict{recreate: make([][]*ast.Term, len(p.rules)), noData: make([][]*ast.Term, len(p.rules))}
		byName[in.names[i]] = v
		verdicts[i] = v
	}
	// split adds each element of a rule's set to the list, of the entry
	// it names, that pick gives.
	split := func(bound *ast.Term, rule string, i int, pick func(*entryVerdict) [][]*ast.Term) bool {
		items, err := collected(bound, rule)
		if err != nil {
			return false
		}
		for _, item := range items {
			name, ok := itemContainer(item)
			v := byName[name]
			if !ok || v == nil {
				return false
			}
			lists := pick(v)
			lists[i] = append(lists[i], item)
		}
		return true
	}
	for i, r := range p.rules {
		if !split(b[ast.Var(r.recreateVar)], varRecreate, i, func(v *entryVerdict) [][]*ast.Term { return v.recreate }) {
			return false
		}
		if r.hasNoData && !split(b[ast.Var(r.noDataVar)], varNoData, i, func(v *entryVerdict) [][]*ast.Term { return v.noData }) {
			return false
		}
	}
	return true
}
