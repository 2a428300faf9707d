package recreatepolicy

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"

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

// signalValues evaluates the policy's signals once for the pass; nil when
// it has none.
func (r *Reconciler) signalValues(ctx context.Context, p *v1alpha1.RecreatePolicy, now time.Time) *signals.Values {
	if len(p.Spec.Signals) == 0 {
		return nil
	}
	if r.Signals == nil {
		names := make([]string, len(p.Spec.Signals))
		for i, s := range p.Spec.Signals {
			names[i] = s.Name
		}
		return signals.Unavailable(names, noPrometheus)
	}
	return r.Signals.Query(ctx, p.Namespace, p.Spec.Signals, now)
}

// signalReaders maps each of the policy's inline rules to the signals it
// names, remembered per policy (UID) and generation.
type signalReaders struct {
	uid        types.UID
	generation int64
	byRule     map[string][]string
}

// readersOf is the policy's signal readers.
func (r *Reconciler) readersOf(p *v1alpha1.RecreatePolicy) map[string][]string {
	if len(p.Spec.Signals) == 0 {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.readers == nil {
		r.readers = map[types.NamespacedName]signalReaders{}
	}
	key := types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
	if sr, ok := r.readers[key]; ok && sr.uid == p.UID && sr.generation == p.Generation {
		return sr.byRule
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
	r.readers[key] = signalReaders{uid: p.UID, generation: p.Generation, byRule: byRule}
	return byRule
}
