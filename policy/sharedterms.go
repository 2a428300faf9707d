package policy

import (
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
)

// sharedTermsLimit bounds each table of sharedTerms: past it a table
// starts afresh (terms handed out stay valid).
const sharedTermsLimit = 10_000

// sharedTerms are the values of input.containers entries that many
// containers have alike, one term each: names, images and resources
// repeat across the pods of a template, and the engine keeps an entry per
// container of every pod it evaluates. Terms are never changed once built.
var sharedTerms = &termTables{}

type termTables struct {
	mu            sync.Mutex
	strings       map[string]*ast.Term
	resourceTerms map[[2]resourceFacts]*ast.Term
}

// neverRecreated is the recreations of a container Rejuv never recreated.
var neverRecreated = ast.ObjectTerm(
	[2]*ast.Term{keyTotal, ast.InternedTerm(0)},
	[2]*ast.Term{keyLast, ast.InternedNullTerm},
)

func (t *termTables) string(s string) *ast.Term {
	t.mu.Lock()
	defer t.mu.Unlock()
	if term, ok := t.strings[s]; ok {
		return term
	}
	if t.strings == nil || len(t.strings) >= sharedTermsLimit {
		t.strings = map[string]*ast.Term{}
	}
	term := ast.StringTerm(s)
	t.strings[s] = term
	return term
}

// resources is an entry's resources: {requests, limits}.
func (t *termTables) resources(requests, limits resourceFacts) *ast.Term {
	key := [2]resourceFacts{requests, limits}
	t.mu.Lock()
	defer t.mu.Unlock()
	if term, ok := t.resourceTerms[key]; ok {
		return term
	}
	if t.resourceTerms == nil || len(t.resourceTerms) >= sharedTermsLimit {
		t.resourceTerms = map[[2]resourceFacts]*ast.Term{}
	}
	term := ast.ObjectTerm(
		[2]*ast.Term{keyRequests, requests.term()},
		[2]*ast.Term{keyLimits, limits.term()},
	)
	t.resourceTerms[key] = term
	return term
}
