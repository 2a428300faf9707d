package backtest

import (
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/rules"
)

// unrecorded are the fields of the input document that a backtest's
// history does not hold, each with why a rule that reads it is not
// replayed: it is evaluated, but never sees them change.
var unrecorded = []struct{ field, why string }{
	{"ready", "it reads containers' readiness, which the history read does not hold: every running container counts as ready"},
	{"started", "it reads whether containers' startup probes passed, which the history read does not hold: every running container counts as started"},
	{"notReadySince", "it reads how long containers were not ready, which the history read does not hold"},
	{"signals", "it reads spec.signals, which a backtest does not query"},
}

// notReplayed are the rules of p that read a field the history does not
// hold, each with the first such field's reason. With readiness in
// history, a rule that reads it is replayed; one that also reads whether
// startup probes passed sees every running container started.
func notReplayed(p *v1alpha1.RecreatePolicy, readiness bool) []RuleNote {
	var out []RuleNote
	for _, r := range p.Spec.Rules {
		src := r.Rego
		if r.Builtin != "" {
			b, ok := rules.Lookup(r.Builtin)
			if !ok {
				continue
			}
			src = b.Source
		}
		readsReady := rules.Names(src, "ready") || rules.Names(src, "notReadySince")
		for _, u := range unrecorded {
			switch {
			case readiness && (u.field == "ready" || u.field == "notReadySince"):
				continue
			case readiness && u.field == "started" && readsReady:
				continue
			}
			if rules.Names(src, u.field) {
				out = append(out, RuleNote{Rule: r.Name, Why: u.why})
				break
			}
		}
	}
	return out
}
