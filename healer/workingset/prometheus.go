package workingset

import (
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// DefaultWorkingSetMetric is the working set series the kubelet's cAdvisor
// endpoint exports, labelled namespace, pod, container and id.
const DefaultWorkingSetMetric = "container_memory_working_set_bytes"

// Prometheus reads the working set from a Prometheus that scrapes the
// kubelets' cAdvisor endpoint. It keeps history: a window is filled at
// once from it, so that a restarted manager judges leaks without
// waiting.
type Prometheus struct {
	API promv1.API
	// Metric is the working set series (DefaultWorkingSetMetric).
	Metric string
	// Interval is the sampler's: a sample reads the raw samples of the
	// last two intervals and keeps each series' newest.
	Interval time.Duration
}

// Name is the source's name.
func (Prometheus) Name() string { return "prometheus" }

// Sample is each container's newest working set scraped within the last
// two intervals.
func (p Prometheus) Sample(ctx context.Context, namespace string) ([]Sample, error) {
	all, err := p.raw(ctx, namespace, 2*p.Interval)
	if err != nil {
		return nil, err
	}
	newest := map[string]Sample{}
	for _, s := range all {
		k := s.Pod + "/" + s.Container + "/" + s.ContainerID
		if n, ok := newest[k]; !ok || s.Time.After(n.Time) {
			newest[k] = s
		}
	}
	out := make([]Sample, 0, len(newest))
	for _, s := range newest {
		out = append(out, s)
	}
	return out, nil
}

// History is every scraped working set of the namespace's containers since
// since, at the times they were scraped (step is the window's slot, which
// takes one sample each).
func (p Prometheus) History(ctx context.Context, namespace string, since time.Time, _ time.Duration) ([]Sample, error) {
	return p.raw(ctx, namespace, time.Since(since))
}

// raw reads the raw samples of the last span, as a range vector.
func (p Prometheus) raw(ctx context.Context, namespace string, span time.Duration) ([]Sample, error) {
	seconds := max(int64(span.Seconds()), 1)
	query := fmt.Sprintf(`%s{namespace=%s,container!="",container!="POD"}[%ds]`, p.metric(), strconv.Quote(namespace), seconds)
	v, _, _, err := p.API.Query(ctx, query, time.Now())
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", query, err)
	}
	m, ok := v.(model.Matrix)
	if !ok {
		return nil, fmt.Errorf("query %s: a %s, not a range vector", query, v.Type())
	}
	var out []Sample
	for _, series := range m {
		pod, container := string(series.Metric["pod"]), string(series.Metric["container"])
		if pod == "" || container == "" {
			continue
		}
		id := containerIDOf(string(series.Metric["id"]))
		for _, sp := range series.Values {
			out = append(out, Sample{Pod: pod, Container: container, ContainerID: id, Time: sp.Timestamp.Time(), Bytes: int64(sp.Value)})
		}
	}
	return out, nil
}

func (p Prometheus) metric() string {
	if p.Metric == "" {
		return DefaultWorkingSetMetric
	}
	return p.Metric
}

// containerIDOf reads the container ID from a cAdvisor cgroup path:
// /kubepods/burstable/pod<uid>/<id> with cgroupfs, or
// .../cri-containerd-<id>.scope with systemd; empty when there is none.
func containerIDOf(cgroup string) string {
	base := strings.TrimSuffix(path.Base(cgroup), ".scope")
	for _, prefix := range []string{"cri-containerd-", "crio-", "docker-"} {
		base = strings.TrimPrefix(base, prefix)
	}
	if len(base) != 64 {
		return ""
	}
	for _, r := range base {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return ""
		}
	}
	return base
}
