package memshapes

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rejuv-dev/rejuv/healer/backtest"
	"github.com/rejuv-dev/rejuv/test/cluster/harness"
)

// TestBacktestOfPrometheusAgreesWithTheCatalogue backfills a real
// Prometheus with a week of every shape's recordings (each seed's), as
// cAdvisor's and kube-state-metrics' series, and backtests the
// memory-leak rule at its defaults over it: for every recording, the
// backtest finds the catalogue's outcome (the same kills, the same first
// recreation and reason), read from Prometheus. The policy opens the
// fleet's gates (maxMatchingPercent, maxUnavailable), which would
// otherwise let recordings of unrelated shapes that match at once hold
// each other back; the gates are healer/backtest's tests'.
func TestBacktestOfPrometheusAgreesWithTheCatalogue(t *testing.T) {
	ctx := context.Background()
	end := time.Now().UTC().Truncate(time.Hour).Add(-time.Hour)
	week := Week(end, seeds)
	dir := t.TempDir()
	file := filepath.Join(dir, "week.txt")
	out, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := week.WriteOpenMetrics(out); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	prom, err := harness.BackfilledPrometheus(ctx, dir, file)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = prom.Stop() }()
	client, err := promapi.NewClient(promapi.Config{Address: prom.URL})
	if err != nil {
		t.Fatal(err)
	}
	p := leakPolicy()
	p.Spec.Limits.MaxMatchingPercent = new(int32(100))
	all := intstr.FromString("100%")
	p.Spec.Rollout.MaxUnavailable = &all
	start := time.Now()
	report, err := backtest.Run(ctx, p, &backtest.Prometheus{API: promv1.NewAPI(client)}, end.Add(-7*24*time.Hour), end, backtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("backtest of %d pods over a week: %s; summary %+v", report.Pods, time.Since(start).Round(time.Second), report.Summary)
	if report.Pods != len(week) || report.Coverage.Unmatched != 0 || report.Coverage.KillsUnknown != "" || !report.Coverage.Readiness {
		t.Errorf("the backtest replayed %d pods, could not match %d, kills unknown %q, readiness %t; want the %d recordings', with their kills and readiness",
			report.Pods, report.Coverage.Unmatched, report.Coverage.KillsUnknown, report.Coverage.Readiness, len(week))
	}
	found := map[string]backtest.ContainerResult{}
	for _, r := range report.Results {
		found[r.Pod] = r
	}
	for _, rec := range week {
		want := replay(t, rec.Shape, rec.Seed)
		got := OutcomeOf(found[rec.Pod.Pod.Name])
		if got.String(rec.Shape) != want.String(rec.Shape) || (want.Recreated && got.Reason != "leak: app: "+want.Reason) {
			t.Errorf("%s: the backtest of Prometheus found %s (reason %q); the catalogue's replay %s (reason %q)",
				rec.Pod.Pod.Name, got.String(rec.Shape), got.Reason, want.String(rec.Shape), want.Reason)
		}
	}
}
