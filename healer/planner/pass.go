package planner

import "github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"

// Pass plans a pass of a policy: v is what its rules said (nil when they
// were not judged: it has none, or they are quarantined), hasRules
// whether it has rules.
func Pass(p *v1alpha1.RecreatePolicy, in *Input, hasRules bool, v *Verdicts) *Plan {
	pl := NewPlan(p, in, false)
	if v != nil {
		pl.Judged(v)
	}
	if next := pl.fireRuns(); next > 0 && (pl.Requeue == 0 || next < pl.Requeue) {
		pl.Requeue = next
	}
	evalFailures := ""
	if v != nil {
		evalFailures = v.Failures
	}
	pl.finish(evalFailures)
	pl.RulesDecided = !hasRules || (v != nil && v.OverBudget == "" && v.Stopped == "")
	return pl
}
