package memshapes

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/backtest"
)

// leakPolicy is a policy with the built-in memory-leak rule at its
// defaults, selecting the recordings' pods.
func leakPolicy() *v1alpha1.RecreatePolicy {
	return &v1alpha1.RecreatePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shapes", Name: "leak", UID: "policy", Generation: 1},
		Spec: v1alpha1.RecreatePolicySpec{
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "shape"}},
			Rules:    []v1alpha1.Rule{{Name: "leak", Builtin: "memory-leak"}},
		},
	}
}

// backtested is a shape's outcome as a backtest of its recording with
// seed finds it: the kills before the first recreation, and that one. The
// backtest's passes are at the recording's sample times, as the
// catalogue's replay evaluates.
func backtested(t testing.TB, s Shape, seed uint64) Outcome {
	t.Helper()
	start := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	rec := Record(s, seed, start)
	report, err := backtest.Run(context.Background(), leakPolicy(), History{rec}, start.Add(FirstSample(seed)), rec.Pod.To, backtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Results) == 0 {
		return Outcome{}
	}
	return OutcomeOf(report.Results[0])
}
