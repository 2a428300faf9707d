package harness

import (
	"context"
	"errors"
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
	log, err := os.Create(filepath.Join(run, "prometheus.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(cfg.Tools.Prometheus, "--config.file="+config, "--storage.tsdb.path="+data,
		"--web.listen-address="+addr, "--storage.tsdb.retention.time=30d", "--log.level=warn")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		_ = os.RemoveAll(run)
		return nil, fmt.Errorf("start Prometheus: %w", err)
	}
	p := &Prometheus{URL: "http://" + addr, cmd: cmd, done: make(chan struct{}), dir: run}
	go func() {
		_ = cmd.Wait()
		_ = log.Close()
		close(p.done)
	}()
	if err := p.waitAnswers(ctx); err != nil {
		out, _ := os.ReadFile(log.Name())
		_ = p.Stop()
		return nil, fmt.Errorf("%w; its log ends:\n%s", err, tail(string(out), 10))
	}
	return p, nil
}

// waitAnswers waits up to a minute until Prometheus answers a query.
func (p *Prometheus) waitAnswers(ctx context.Context) error {
	deadline := time.Now().Add(time.Minute)
	last := "no answer"
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			return errors.New("prometheus exited at its start")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		body, err := p.get(ctx, "/api/v1/query?query=vector(1)")
		if err != nil {
			last = err.Error()
			continue
		}
		if strings.Contains(body, `"status":"success"`) {
			return nil
		}
		last = body
	}
	return fmt.Errorf("prometheus did not answer within a minute (last: %s)", last)
}
