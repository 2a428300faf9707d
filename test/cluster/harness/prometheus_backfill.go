package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// BackfilledPrometheus starts Debian's Prometheus on the loopback address,
// scraping nothing, over the series of an OpenMetrics file written into
// blocks by promtool (tsdb create-blocks-from openmetrics): history as a
// cluster's Prometheus would hold it, made up front. Its data lives in a
// new directory under dir, which Stop removes; it keeps data of up to 30
// days. It waits until a query answers.
func BackfilledPrometheus(ctx context.Context, dir, openMetrics string) (*Prometheus, error) {
	cfg, err := DefaultConfig()
	if err != nil {
		return nil, err
	}
	if err := ensureTools(ctx, &cfg); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	run, err := os.MkdirTemp(dir, "backfilled-")
	if err != nil {
		return nil, fmt.Errorf("create Prometheus's directory: %w", err)
	}
	data := filepath.Join(run, "data")
	// Blocks of up to a day: a week of history is seven of them.
	backfill := exec.CommandContext(ctx, cfg.Tools.Promtool, "tsdb", "create-blocks-from", "openmetrics", "--max-block-duration=24h", openMetrics, data)
	if out, err := backfill.CombinedOutput(); err != nil {
		_ = os.RemoveAll(run)
		return nil, fmt.Errorf("backfill Prometheus from %s: %w: %s", openMetrics, err, tail(string(out), 10))
	}
	config := filepath.Join(run, "prometheus.yml")
	if err := os.WriteFile(config, []byte("global:\n  scrape_interval: 1m\n"), 0o644); err != nil {
		return nil, err
	}
	port, err := freePort("127.0.0.1")
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	return runPrometheus(ctx, cfg.Tools.Prometheus, run, addr, config, "30d", func(ctx context.Context, p *Prometheus) error {
		return p.waitQuery(ctx, "vector(1)", 200*time.Millisecond, "answer", func(body string) bool {
			return strings.Contains(body, `"status":"success"`)
		})
	})
}
