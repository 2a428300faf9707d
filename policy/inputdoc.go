package policy

import (
	"fmt"
	"slices"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
)

// Input is the input document rule sees for the target at now, as plain
// values (maps, slices, strings, json.Number): what kubectl rejuv policy
// test --input prints. input.pod holds the fields of the pod that the
// program's rules read, as in an evaluation.
func (p *Program) Input(t Target, now time.Time, rule string) (any, error) {
	i := slices.IndexFunc(p.rules, func(r *compiledRule) bool { return r.name == rule })
	if i < 0 {
		return nil, fmt.Errorf("policy %s has no rule %q", p.ref, rule)
	}
	in, err := p.inputOf(t)
	if err != nil {
		return nil, fmt.Errorf("input of policy %s for pod %s/%s: %w", p.ref, t.Pod.Namespace, t.Pod.Name, err)
	}
	defer in.doc.dropPrevious()
	doc := ast.NewObject(append(in.document(now, p.policyTerm, in.containerTerms()), [2]*ast.Term{keyParameters, p.rules[i].parameters})...)
	return ast.JSON(doc)
}
