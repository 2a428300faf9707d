package recreatepolicy

import (
	"context"
	"time"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/signals"
	"github.com/rejuv-dev/rejuv/rules"
)

// SignalSource evaluates a policy's signals (the manager's Prometheus).
type SignalSource interface {
	Query(ctx context.Context, namespace string, s []v1alpha1.Signal, now time.Time) *signals.Values
}

// noPrometheus is why signals have no values when the manager has no
// Prometheus.
const noPrometheus = "the manager has no Prometheus to query (--prometheus-url)"

// signalValues evaluates the policy's signals once for the pass, from
// source (nil when the manager has no Prometheus) within budget (none when
// 0); nil when it has none.
func signalValues(ctx context.Context, p *v1alpha1.RecreatePolicy, source SignalSource, budget time.Duration, now time.Time) *signals.Values {
	if len(p.Spec.Signals) == 0 {
		return nil
	}
	if source == nil {
		names := make([]string, len(p.Spec.Signals))
		for i, s := range p.Spec.Signals {
			names[i] = s.Name
		}
		return signals.Unavailable(names, noPrometheus)
	}
	if budget > 0 {
		// Prometheus may spend at most the pass's evaluation budget on
		// them.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, budget)
		defer cancel()
	}
	return source.Query(ctx, p.Namespace, p.Spec.Signals, now)
}

// readersOf maps each of the policy's inline rules to the signals it
// names (rules.Names remembers its answers, so a pass parses nothing).
func readersOf(p *v1alpha1.RecreatePolicy) map[string][]string {
	if len(p.Spec.Signals) == 0 {
		return nil
	}
	byRule := map[string][]string{}
	for _, rule := range p.Spec.Rules {
		if rule.Rego == "" {
			continue
		}
		for _, s := range p.Spec.Signals {
			if rules.Names(rule.Rego, s.Name) {
				byRule[rule.Name] = append(byRule[rule.Name], s.Name)
			}
		}
	}
	return byRule
}
