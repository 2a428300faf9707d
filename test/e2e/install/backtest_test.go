package install

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/rejuv-dev/rejuv/healer/backtest"
	"github.com/rejuv-dev/rejuv/test/cluster/harness"
	"github.com/rejuv-dev/rejuv/test/memshapes"
)

// backtestPolicy is the memory-leak rule at its defaults over the
// recordings' pods; it opens the fleet's gates, which would otherwise let
// recordings of unrelated shapes that match at once hold each other back.
const backtestPolicy = `apiVersion: rejuv.dev/v1alpha1
kind: RecreatePolicy
metadata:
  name: leaks
  namespace: shapes
spec:
  selector:
    matchLabels: {app: shape}
  rules:
  - name: leak
    builtin: memory-leak
  limits:
    maxMatchingPercent: 100
  rollout:
    maxUnavailable: 100%
`

// backtestWithThePlugin runs kubectl rejuv policy backtest, as krew
// installed it (on PATH), against a Prometheus backfilled with a week of
// every memory shape's recordings (two seeds each), as a user runs it with
// --prometheus: the JSON report covers every recording, and each one's
// outcome is what the catalogue requires of its shape (a leak recreated
// before 90% of its limit, no healthy shape recreated, no more kills than
// the shape may have).
func backtestWithThePlugin(t *testing.T) {
	ctx := context.Background()
	end := time.Now().UTC().Truncate(time.Hour).Add(-time.Hour)
	week := memshapes.Week(end, 2)
	dir := t.TempDir()
	series := filepath.Join(dir, "week.txt")
	f, err := os.Create(series)
	if err != nil {
		t.Fatal(err)
	}
	if err := week.WriteOpenMetrics(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	prom, err := harness.BackfilledPrometheus(ctx, dir, series)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = prom.Stop() }()
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte(backtestPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cmd := exec.Command("kubectl", "rejuv", "policy", "backtest", "--kubeconfig", cluster.Kubeconfig(), "-f", policy,
		"--since", "7d", "--until", end.Format(time.RFC3339), "--prometheus", prom.URL, "-o", "json")
	var stderr []byte
	out, err := cmd.Output()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		stderr = ee.Stderr
	}
	if err != nil {
		t.Fatalf("kubectl rejuv policy backtest: %v\n%s", err, stderr)
	}
	t.Logf("kubectl rejuv policy backtest of %d recordings over a week: %s", len(week), time.Since(start).Round(time.Second))
	var results struct {
		Reports []backtest.Report `json:"reports"`
	}
	if err := json.Unmarshal(out, &results); err != nil {
		t.Fatalf("the backtest's JSON: %v\n%s", err, out)
	}
	if len(results.Reports) != 1 {
		t.Fatalf("%d reports; want the one policy's", len(results.Reports))
	}
	r := results.Reports[0]
	if r.Pods != len(week) || r.Coverage.Unmatched != 0 || r.Coverage.KillsUnknown != "" {
		t.Errorf("the report covers %d pods (%d unmatched, kills unknown %q); want the %d recordings', with their kills", r.Pods, r.Coverage.Unmatched, r.Coverage.KillsUnknown, len(week))
	}
	found := map[string]backtest.ContainerResult{}
	for _, res := range r.Results {
		found[res.Pod] = res
	}
	leaks := 0
	for _, rec := range week {
		got := memshapes.OutcomeOf(found[rec.Pod.Pod.Name])
		if !got.Met(rec.Shape) {
			t.Errorf("%s (%s): the plugin's backtest found %s (%q)", rec.Pod.Pod.Name, rec.Shape.What, got.String(rec.Shape), got.Reason)
		}
		if rec.Shape.Leak {
			leaks++
		}
	}
	if leaks == 0 || r.Summary.Recreations < leaks {
		t.Errorf("%d recreations for %d leaking recordings; the premise is a week with leaks", r.Summary.Recreations, leaks)
	}
	t.Logf("summary: %+v", r.Summary)
}
