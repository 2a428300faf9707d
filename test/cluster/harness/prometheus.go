package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Prometheus is a Prometheus server, Debian's, run on the host beside the
// cluster and scraping the node's kubelet: its cAdvisor endpoint
// (/metrics/cadvisor) every ScrapeInterval, as the kubelet job of
// kube-prometheus does. Pods reach it at URL, on the node's address.
type Prometheus struct {
	URL string
	cmd *exec.Cmd
	// done is closed when the process has exited.
	done chan struct{}
	dir  string
}

// PrometheusScrapeInterval is how often the harness's Prometheus scrapes
// the kubelet: short, so that tests see history soon.
const PrometheusScrapeInterval = 5 * time.Second

// PrometheusOptions adds to what the harness's Prometheus scrapes.
type PrometheusOptions struct {
	// ServiceAccountToken, when set, has Prometheus scrape the targets
	// given to SetTargets over HTTPS with this bearer token (accepting
	// self-signed certificates), honoring the labels the metrics have.
	// Debian's Prometheus is built without Kubernetes service discovery:
	// the caller discovers the targets.
	ServiceAccountToken string
	// RuleFiles are rule files Prometheus evaluates every
	// PrometheusScrapeInterval.
	RuleFiles []string
}

// TargetGroup is targets ("host:port") and the labels they are scraped
// with, as Prometheus's file-based discovery reads them.
type TargetGroup struct {
	Targets []string          `json:"targets"`
	Labels  map[string]string `json:"labels"`
}

// StartPrometheus starts Debian's Prometheus (installed with the
// cluster's tools) with its data in a new directory under the cluster's,
// and waits until it has scraped the kubelet once. Stop ends it.
func (c *Cluster) StartPrometheus(ctx context.Context, o PrometheusOptions) (*Prometheus, error) {
	if err := ensureTools(ctx, &c.Config); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(c.Config.path("prometheus"), 0o755); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(c.Config.path("prometheus"), "run-")
	if err != nil {
		return nil, fmt.Errorf("create Prometheus's directory: %w", err)
	}
	port, err := freePort(c.Config.NodeIP().String())
	if err != nil {
		return nil, err
	}
	config := fmt.Sprintf(`global:
  scrape_interval: %[1]s
  evaluation_interval: %[1]s
scrape_configs:
- job_name: kubelet-cadvisor
  scheme: https
  metrics_path: /metrics/cadvisor
  tls_config:
    ca_file: %[2]s
    cert_file: %[3]s
    key_file: %[4]s
  static_configs:
`, PrometheusScrapeInterval, c.Config.pki("ca.crt"), c.Config.pki("apiserver-kubelet-client.crt"), c.Config.pki("apiserver-kubelet-client.key"))
	var targets strings.Builder
	for _, n := range c.Nodes() {
		fmt.Fprintf(&targets, "  - targets: [\"%s:%d\"]\n    labels: {node: %q}\n", n.IP, n.KubeletPort(), n.Name)
	}
	config += targets.String()
	if o.ServiceAccountToken != "" {
		tokenFile := filepath.Join(dir, "token")
		if err := os.WriteFile(tokenFile, []byte(o.ServiceAccountToken), 0o600); err != nil {
			return nil, err
		}
		config += fmt.Sprintf(`- job_name: services
  scheme: https
  honor_labels: true
  tls_config: {insecure_skip_verify: true}
  authorization: {credentials_file: %q}
  file_sd_configs:
  - files: [%q]
    refresh_interval: %s
`, tokenFile, filepath.Join(dir, targetsFile), PrometheusScrapeInterval)
	}
	if len(o.RuleFiles) > 0 {
		quoted := make([]string, len(o.RuleFiles))
		for i, f := range o.RuleFiles {
			quoted[i] = strconv.Quote(f)
		}
		config += "rule_files: [" + strings.Join(quoted, ", ") + "]\n"
	}
	configFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(configFile, []byte(config), 0o644); err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("%s:%d", c.Config.NodeIP(), port)
	return runPrometheus(ctx, c.Config.Tools.Prometheus, dir, addr, configFile, "1d", func(ctx context.Context, p *Prometheus) error {
		return p.waitQuery(ctx, "up", time.Second, "scrape the kubelet", func(body string) bool {
			return strings.Contains(body, `"value":[`) && strings.Contains(body, `"1"]`)
		})
	})
}

// runPrometheus starts bin serving at addr with configFile, its data and
// log in dir, keeping data for retention, and waits with ready: a failure
// stops it, removes dir and says how its log ends.
func runPrometheus(ctx context.Context, bin, dir, addr, configFile, retention string, ready func(context.Context, *Prometheus) error) (*Prometheus, error) {
	log, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--config.file="+configFile, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--storage.tsdb.retention.time="+retention, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("start Prometheus: %w", err)
	}
	p := &Prometheus{URL: "http://" + addr, cmd: cmd, done: make(chan struct{}), dir: dir}
	go func() {
		_ = cmd.Wait()
		_ = log.Close()
		close(p.done)
	}()
	if err := ready(ctx, p); err != nil {
		// Stop removes the directory, the log with it.
		out, _ := os.ReadFile(log.Name())
		_ = p.Stop()
		return nil, fmt.Errorf("%w; its log ends:\n%s", err, tail(string(out), 10))
	}
	return p, nil
}

// waitQuery asks query every poll, for up to a minute, until answered
// holds for the body of the answer; what says what it waited for.
func (p *Prometheus) waitQuery(ctx context.Context, query string, poll time.Duration, what string, answered func(body string) bool) error {
	deadline := time.Now().Add(time.Minute)
	last := "no answer"
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			return errors.New("prometheus exited at its start")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
		body, err := p.get(ctx, "/api/v1/query?query="+url.QueryEscape(query))
		if err != nil {
			last = err.Error()
			continue
		}
		if answered(body) {
			return nil
		}
		last = body
	}
	return fmt.Errorf("prometheus did not %s within a minute (last: %s)", what, last)
}

func (p *Prometheus) get(ctx context.Context, path string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL+path, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// targetsFile is where SetTargets writes, in Prometheus's directory.
const targetsFile = "targets.json"

// SetTargets replaces the targets scraped with the ServiceAccountToken;
// Prometheus reads them within a PrometheusScrapeInterval.
func (p *Prometheus) SetTargets(groups []TargetGroup) error {
	data, err := json.Marshal(groups)
	if err != nil {
		return err
	}
	tmp := filepath.Join(p.dir, targetsFile+".new")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("write Prometheus's targets: %w", err)
	}
	return os.Rename(tmp, filepath.Join(p.dir, targetsFile))
}

// Stop ends Prometheus and removes its data.
func (p *Prometheus) Stop() error {
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	return os.RemoveAll(p.dir)
}

// freePort is a TCP port free on host now.
func freePort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("find a free port on %s: %w", host, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
