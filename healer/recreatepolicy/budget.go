package recreatepolicy

import (
	"fmt"
	"time"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// DefaultEvaluationBudget is how long one pass may evaluate a policy's
// rules over its pods when the Reconciler sets no budget: a hundred times
// what ten thousand pods cost with the built-in rules.
const DefaultEvaluationBudget = 10 * time.Second

// overBudgetPass is a pass that ran out of the evaluation budget: took
// counts the signals' queries (queries of it).
type overBudgetPass struct {
	evaluated int
	took      time.Duration
	queries   time.Duration
}

func (o *overBudgetPass) message(selected int, budget time.Duration) string {
	spent := ""
	if o.queries > 0 {
		spent = fmt.Sprintf(" (Prometheus %s of it, on the signals' queries)", o.queries.Round(time.Millisecond))
	}
	return fmt.Sprintf("evaluating the rules took %s%s for %d of the %d selected pods, over the budget of %s per pass (the manager's --policy-evaluation-budget): "+
		"the rules are not evaluated again until the policy's spec changes (make the rules or queries cheaper or select fewer pods)",
		o.took.Round(time.Millisecond), spent, o.evaluated, selected, budget)
}

func (r *Reconciler) evaluationBudget() time.Duration {
	if r.EvaluationBudget > 0 {
		return r.EvaluationBudget
	}
	return DefaultEvaluationBudget
}

// overBudget says whether this generation of the policy has run out of
// the evaluation budget already: its rules are not evaluated again, so
// that one policy's slow rules cannot take a worker at every pass.
func (r *Reconciler) overBudget(p *v1alpha1.RecreatePolicy) bool {
	c := haltedFor(p, v1alpha1.ReasonEvaluationBudget)
	return c != nil && c.ObservedGeneration == p.Generation
}
