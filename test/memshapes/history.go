package memshapes

import (
	"context"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/rejuv-dev/rejuv/healer/backtest"
	"github.com/rejuv-dev/rejuv/healer/workingset"
)

// History is recordings as a backtest's source: what Prometheus would
// hold of them, read from memory.
type History []Recording

// Pods are the recordings' pods of namespace that selector chooses and
// that ran in [from, to).
func (h History) Pods(_ context.Context, namespace string, selector labels.Selector, from, to time.Time) ([]backtest.Pod, backtest.Coverage, error) {
	var out []backtest.Pod
	for _, r := range h {
		p := r.Pod
		if p.Pod.Namespace == namespace && selector.Matches(labels.Set(p.Pod.Labels)) && p.From.Before(to) && (p.To.IsZero() || p.To.After(from)) {
			out = append(out, p)
		}
	}
	return out, backtest.Coverage{}, nil
}

// WorkingSet is the samples of the named pods in (from, to].
func (h History) WorkingSet(_ context.Context, namespace string, pods []string, from, to time.Time) (map[backtest.ContainerRef][]workingset.Sample, error) {
	out := map[backtest.ContainerRef][]workingset.Sample{}
	for _, r := range h {
		if r.Pod.Pod.Namespace != namespace || !slices.Contains(pods, r.Pod.Pod.Name) {
			continue
		}
		for _, s := range r.Samples {
			if s.Time.After(from) && !s.Time.After(to) {
				ref := backtest.ContainerRef{Pod: s.Pod, Container: s.Container}
				out[ref] = append(out[ref], s)
			}
		}
	}
	return out, nil
}
