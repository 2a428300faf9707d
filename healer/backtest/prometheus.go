package backtest

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/rejuv-dev/rejuv/healer/workingset"
)

// Prometheus is history as a Prometheus holds it, scraping the kubelets'
// cAdvisor endpoint (as the manager's Prometheus source reads it) and,
// where it runs, kube-state-metrics:
//
//   - the containers' instances from cAdvisor's container_start_time_seconds
//     (an instance per container ID of the cgroup path, the id label), each
//     ending as the next starts, their memory limits from
//     container_spec_memory_limit_bytes; a pod is gone when its samples stop
//     (Pod.To);
//   - the working set, the manager's series (Metric), its raw samples;
//   - the labels of past pods from kube-state-metrics' kube_pod_labels (its
//     label_<name> labels: only those kube-state-metrics is allowed to
//     export, --metric-labels-allowlist);
//   - the OOM kills from kube-state-metrics' restart counter and last
//     terminated reason.
type Prometheus struct {
	API promv1.API
	// Metric is the working set series (workingset.DefaultWorkingSetMetric).
	Metric string
	// Live are the pods running now, as the API server has them: matched
	// by their labels, with their spec, whatever history holds of them.
	Live []corev1.Pod
	// Step is the resolution of the times read from whole series (a pod's
	// end, a kill), DefaultStep when zero.
	Step time.Duration
	// PodsPerQuery bounds the pods one query of the working set names
	// (DefaultPodsPerQuery when zero): with a chunk's length, it bounds
	// the samples one query returns.
	PodsPerQuery int
}

// Defaults of Prometheus.
const (
	DefaultStep         = time.Minute
	DefaultPodsPerQuery = 50
)

// History's series.
const (
	startTimeMetric = "container_start_time_seconds"
	limitMetric     = "container_spec_memory_limit_bytes"
	podLabelsMetric = "kube_pod_labels"
	restartsMetric  = "kube_pod_container_status_restarts_total"
	readyMetric     = "kube_pod_container_status_ready"
	lastReason      = "kube_pod_container_status_last_terminated_reason"
)

// Pods reads the instances of the containers of namespace that ran in
// [from, to), and the pods they belong to whose labels (live, or in
// kube_pod_labels) selector chooses.
func (p *Prometheus) Pods(ctx context.Context, namespace string, selector labels.Selector, from, to time.Time) ([]Pod, Coverage, error) {
	span := promDuration(to.Sub(from))
	step := promDuration(p.step())
	containers := fmt.Sprintf(`{namespace=%s,container!="",container!="POD"}`, strconv.Quote(namespace))
	starts, err := p.vector(ctx, fmt.Sprintf(`max_over_time(%s%s[%s])`, startTimeMetric, containers, span), to)
	if err != nil {
		return nil, Coverage{}, err
	}
	limits, err := p.vector(ctx, fmt.Sprintf(`max_over_time(%s%s[%s])`, limitMetric, containers, span), to)
	if err != nil {
		return nil, Coverage{}, err
	}
	podLabels, err := p.vector(ctx, fmt.Sprintf(`max_over_time(%s{namespace=%s}[%s])`, podLabelsMetric, strconv.Quote(namespace), span), to)
	if err != nil {
		return nil, Coverage{}, err
	}
	kills, err := p.kills(ctx, namespace, span, step, to)
	if err != nil {
		return nil, Coverage{}, err
	}

	h := newHistoryPods(p.Live, namespace)
	for _, s := range starts {
		h.instance(s.Metric, time.Unix(0, int64(float64(s.Value)*1e9)).UTC())
	}
	for _, s := range limits {
		h.limit(s.Metric, int64(s.Value))
	}
	for _, s := range podLabels {
		h.labels(s.Metric)
	}
	pods, cov, err := h.pods(selector, kills, p.step())
	if err != nil {
		return nil, cov, err
	}
	restarts, err := p.vector(ctx, fmt.Sprintf(`count(max_over_time(%s{namespace=%s}[%s]))`, restartsMetric, strconv.Quote(namespace), span), to)
	if err != nil {
		return nil, cov, err
	}
	ready, err := p.vector(ctx, fmt.Sprintf(`count(max_over_time(%s{namespace=%s}[%s]))`, readyMetric, strconv.Quote(namespace), span), to)
	if err != nil {
		return nil, cov, err
	}
	cov.Readiness = len(ready) > 0
	if len(restarts) == 0 && len(pods) > 0 {
		cov.KillsUnknown = fmt.Sprintf("Prometheus has no %s of the namespace in the period (kube-state-metrics' series): the OOM kills are not known", restartsMetric)
	}
	return pods, cov, nil
}

// kills are the times at which a container's restart counter went up
// with its last termination OOMKilled, to a step, by pod UID and
// container; nil when kube-state-metrics' series are not there.
func (p *Prometheus) kills(ctx context.Context, namespace, span, step string, to time.Time) (map[ContainerRef][]time.Time, error) {
	ns := fmt.Sprintf(`{namespace=%s}`, strconv.Quote(namespace))
	query := fmt.Sprintf(`((%[1]s%[2]s - %[1]s%[2]s offset %[4]s) > 0 and on (namespace, pod, uid, container) %[3]s{namespace=%[5]s,reason="OOMKilled"} == 1)[%[6]s:%[4]s]`,
		restartsMetric, ns, lastReason, step, strconv.Quote(namespace), span)
	m, err := p.matrix(ctx, query, to)
	if err != nil {
		return nil, err
	}
	out := map[ContainerRef][]time.Time{}
	for _, series := range m {
		ref := ContainerRef{Pod: string(series.Metric["uid"]), Container: string(series.Metric["container"])}
		for _, sp := range series.Values {
			out[ref] = append(out[ref], sp.Timestamp.Time().UTC())
		}
	}
	return out, nil
}

// WorkingSet reads the raw samples of the working set of the named pods'
// containers in (from, to], PodsPerQuery pods a query.
func (p *Prometheus) WorkingSet(ctx context.Context, namespace string, pods []string, from, to time.Time) (map[ContainerRef][]workingset.Sample, error) {
	out := map[ContainerRef][]workingset.Sample{}
	selector := fmt.Sprintf(`{namespace=%s,pod=~%%s,container!="",container!="POD"}`, strconv.Quote(namespace))
	err := p.rangeOfPods(ctx, p.metric(), selector, pods, from, to, func(series *model.SampleStream) {
		pod, container := string(series.Metric["pod"]), string(series.Metric["container"])
		id, _ := idsOf(string(series.Metric["id"]))
		ref := ContainerRef{Pod: pod, Container: container}
		list := out[ref]
		for _, sp := range series.Values {
			if at := sp.Timestamp.Time(); at.After(from) {
				list = append(list, workingset.Sample{Pod: pod, Container: container, ContainerID: id, Time: at, Bytes: int64(sp.Value)})
			}
		}
		out[ref] = list
	})
	if err != nil {
		return nil, err
	}
	for ref, list := range out {
		// A container's instances are separate series.
		slices.SortStableFunc(list, func(a, b workingset.Sample) int { return a.Time.Compare(b.Time) })
		out[ref] = list
	}
	return out, nil
}

// Readiness reads kube-state-metrics' kube_pod_container_status_ready of
// the named pods' containers in (from, to], PodsPerQuery pods a query.
func (p *Prometheus) Readiness(ctx context.Context, namespace string, pods []string, from, to time.Time) (map[ContainerRef][]ReadySample, error) {
	out := map[ContainerRef][]ReadySample{}
	err := p.rangeOfPods(ctx, readyMetric, fmt.Sprintf(`{namespace=%s,pod=~%%s}`, strconv.Quote(namespace)), pods, from, to, func(series *model.SampleStream) {
		ref := ContainerRef{Pod: string(series.Metric["pod"]), Container: string(series.Metric["container"])}
		for _, sp := range series.Values {
			if at := sp.Timestamp.Time(); at.After(from) {
				out[ref] = append(out[ref], ReadySample{Time: at, Ready: sp.Value == 1})
			}
		}
	})
	if err != nil {
		return nil, err
	}
	for ref, list := range out {
		slices.SortStableFunc(list, func(a, b ReadySample) int { return a.Time.Compare(b.Time) })
		out[ref] = list
	}
	return out, nil
}

// rangeOfPods reads the raw samples of metric with the matchers of
// selector (its %s the pods' regular expression) in (from, to], for the
// pods PodsPerQuery at a time, handing each series to each.
func (p *Prometheus) rangeOfPods(ctx context.Context, metric, selector string, pods []string, from, to time.Time, each func(*model.SampleStream)) error {
	per := p.PodsPerQuery
	if per <= 0 {
		per = DefaultPodsPerQuery
	}
	for batch := range slices.Chunk(pods, per) {
		quoted := make([]string, len(batch))
		for i, name := range batch {
			quoted[i] = regexp.QuoteMeta(name)
		}
		query := metric + fmt.Sprintf(selector, strconv.Quote(strings.Join(quoted, "|"))) + "[" + promDuration(to.Sub(from)) + "]"
		m, err := p.matrix(ctx, query, to)
		if err != nil {
			return err
		}
		for _, series := range m {
			each(series)
		}
	}
	return nil
}

// matrix is the result of an instant query of a range vector; an error
// names the query, shortened when it names many pods.
func (p *Prometheus) matrix(ctx context.Context, query string, at time.Time) (model.Matrix, error) {
	v, _, _, err := p.API.Query(ctx, query, at)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", truncate(query), err)
	}
	m, ok := v.(model.Matrix)
	if !ok {
		return nil, fmt.Errorf("query %s: a %s, not a range vector", truncate(query), v.Type())
	}
	return m, nil
}

// vector is an instant query's result.
func (p *Prometheus) vector(ctx context.Context, query string, at time.Time) (model.Vector, error) {
	v, _, _, err := p.API.Query(ctx, query, at)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", query, err)
	}
	vec, ok := v.(model.Vector)
	if !ok {
		return nil, fmt.Errorf("query %s: a %s, not an instant vector", query, v.Type())
	}
	return vec, nil
}

func (p *Prometheus) metric() string {
	if p.Metric == "" {
		return workingset.DefaultWorkingSetMetric
	}
	return p.Metric
}

func (p *Prometheus) step() time.Duration {
	if p.Step <= 0 {
		return DefaultStep
	}
	return p.Step
}

// promDuration is d in PromQL's units, whole seconds (at least one).
func promDuration(d time.Duration) string {
	return strconv.FormatInt(max(int64(math.Ceil(d.Seconds())), 1), 10) + "s"
}

// truncate shortens a query naming many pods for an error.
func truncate(query string) string {
	if len(query) > 200 {
		return query[:200] + "..."
	}
	return query
}

// idsOf reads the container ID and the pod UID from a cAdvisor cgroup
// path: /kubepods/burstable/pod<uid>/<id> with cgroupfs, or
// .../kubepods-burstable-pod<uid_with_underscores>.slice/cri-containerd-<id>.scope
// with systemd; empty when the path has none.
func idsOf(cgroup string) (id, uid string) {
	parts := strings.Split(strings.Trim(cgroup, "/"), "/")
	if len(parts) < 2 {
		return "", ""
	}
	base := strings.TrimSuffix(parts[len(parts)-1], ".scope")
	for _, prefix := range []string{"cri-containerd-", "crio-", "docker-"} {
		base = strings.TrimPrefix(base, prefix)
	}
	if len(base) == 64 && strings.Trim(base, "0123456789abcdef") == "" {
		id = base
	}
	parent := strings.TrimSuffix(parts[len(parts)-2], ".slice")
	if i := strings.LastIndex(parent, "pod"); i >= 0 && (i == 0 || parent[i-1] == '-') {
		uid = strings.ReplaceAll(parent[i+len("pod"):], "_", "-")
	}
	return id, uid
}
