package recreatepolicy

import (
	"errors"
	"fmt"
	"time"

	"github.com/rejuv-dev/rejuv/policy"
)

// DefaultEvaluationBudget is how long one pass may evaluate a policy's
// rules over its pods when the Reconciler sets no budget: a hundred times
// what ten thousand pods cost with the built-in rules.
const DefaultEvaluationBudget = 10 * time.Second

// overEvaluationBudget is a pass that ran out of the evaluation budget: took
// counts the signals' queries (queries of it).
type overEvaluationBudget struct {
	evaluated int
	took      time.Duration
	queries   time.Duration
}

func (o *overEvaluationBudget) message(selected int, budget time.Duration) string {
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

// stoppedMessage says which rule the sandbox stopped and why.
func stoppedMessage(s *policy.Stop) string {
	rules := policy.RulesText(s.Rules)
	why := s.Err
	if ee, ok := errors.AsType[*policy.EvalError](s.Err); ok {
		rules += " for pod " + ee.Pod
		why = ee.Err
	}
	return fmt.Sprintf("the sandbox stopped %s: %v: the rules are not evaluated again until the policy's spec changes", rules, why)
}
