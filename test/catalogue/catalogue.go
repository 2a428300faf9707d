package catalogue

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/rejuv-dev/rejuv/daemon"
	"github.com/rejuv-dev/rejuv/healer"
)

// Metric is one metric as a binary registers it.
type Metric struct {
	Name, Type, Help string
	Labels           []string
}

// Manager is every metric of the manager's own, as healer.RegisterMetrics
// adds them to its registry.
func Manager() ([]Metric, error) {
	var r recorder
	healer.RegisterMetrics(&r)
	return r.metrics()
}

// Daemon is every metric of the daemon's own, as
// daemon.RegisterOwnMetrics adds them to its registry.
func Daemon() ([]Metric, error) {
	var r recorder
	daemon.RegisterOwnMetrics(&r)
	return r.metrics()
}

// All is the manager's metrics, then the daemon's.
func All() ([]Metric, error) {
	manager, err := Manager()
	if err != nil {
		return nil, err
	}
	daemon, err := Daemon()
	if err != nil {
		return nil, err
	}
	return append(manager, daemon...), nil
}

// Series are the names of the series the binaries' own metrics are
// served as (a histogram's _bucket, _sum and _count), with each one's
// metric.
func Series(ms []Metric) map[string]Metric {
	out := map[string]Metric{}
	for _, m := range ms {
		if m.Type != "histogram" {
			out[m.Name] = m
			continue
		}
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			out[m.Name+suffix] = m
		}
	}
	return out
}

// recorder is a Registerer that keeps the collectors registered, which
// tell their types, where a registry's descriptions do not.
type recorder struct {
	collectors []prometheus.Collector
}

func (r *recorder) Register(c prometheus.Collector) error {
	r.collectors = append(r.collectors, c)
	return nil
}

func (r *recorder) MustRegister(cs ...prometheus.Collector) {
	r.collectors = append(r.collectors, cs...)
}

func (r *recorder) Unregister(prometheus.Collector) bool { return false }

// metrics describes the recorded collectors, sorted by name. They are
// registered on a pedantic registry first, which refuses what Prometheus
// would (bad names, the same name twice).
func (r *recorder) metrics() ([]Metric, error) {
	pedantic := prometheus.NewPedanticRegistry()
	var out []Metric
	for _, c := range r.collectors {
		if err := pedantic.Register(c); err != nil {
			return nil, fmt.Errorf("register a collector: %w", err)
		}
		kind, err := typeOf(c)
		if err != nil {
			return nil, err
		}
		descs := make(chan *prometheus.Desc, 16)
		go func() { c.Describe(descs); close(descs) }()
		for d := range descs {
			m, err := parseDesc(d)
			if err != nil {
				return nil, err
			}
			m.Type = kind
			out = append(out, m)
		}
	}
	if _, err := pedantic.Gather(); err != nil {
		return nil, fmt.Errorf("gather the metrics: %w", err)
	}
	slices.SortFunc(out, func(a, b Metric) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// typeOf is a collector's metric type: a vector's from its Go type, a
// single metric's from what it writes.
func typeOf(c prometheus.Collector) (string, error) {
	switch c := c.(type) {
	case *prometheus.CounterVec:
		return "counter", nil
	case *prometheus.GaugeVec:
		return "gauge", nil
	case *prometheus.HistogramVec:
		return "histogram", nil
	case *prometheus.SummaryVec:
		return "summary", nil
	case prometheus.Metric:
		var m dto.Metric
		if err := c.Write(&m); err != nil {
			return "", fmt.Errorf("write %s: %w", c.Desc(), err)
		}
		switch {
		case m.Counter != nil:
			return "counter", nil
		case m.Gauge != nil:
			return "gauge", nil
		case m.Histogram != nil:
			return "histogram", nil
		case m.Summary != nil:
			return "summary", nil
		}
	}
	return "", fmt.Errorf("collector %T: type unknown", c)
}

var descPattern = regexp.MustCompile(`^Desc\{fqName: ("(?:[^"\\]|\\.)*"), help: ("(?:[^"\\]|\\.)*"), .*variableLabels: \{([^}]*)\}\}$`)

// parseDesc reads a description's name, help and variable labels from
// its String, the only way client_golang shows them.
func parseDesc(d *prometheus.Desc) (Metric, error) {
	sub := descPattern.FindStringSubmatch(d.String())
	if sub == nil {
		return Metric{}, fmt.Errorf("read the description %s", d)
	}
	name, err := strconv.Unquote(sub[1])
	if err != nil {
		return Metric{}, fmt.Errorf("read the name of %s: %w", d, err)
	}
	help, err := strconv.Unquote(sub[2])
	if err != nil {
		return Metric{}, fmt.Errorf("read the help of %s: %w", d, err)
	}
	var labels []string
	if sub[3] != "" {
		labels = strings.Split(sub[3], ",")
	}
	return Metric{Name: name, Help: help, Labels: labels}, nil
}
