package main

import (
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are served from testapp's own registry, not the global one, so that
// nothing imported can add to them behind the reader's back.
type metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	errors   prometheus.Counter
}

func newMetrics(held func() int64) *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "testapp_requests_total",
			Help: "HTTP requests answered, by route and status code.",
		}, []string{"path", "code"}),
		errors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "testapp_errors_total",
			Help: "HTTP requests answered with a 5xx status code.",
		}),
	}
	m.registry.MustRegister(
		m.requests,
		m.errors,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "testapp_held_bytes",
			Help: "Memory held on purpose by --grow-rate or the growRate control.",
		}, func() float64 { return float64(held()) }),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// instrument counts the requests h answers under the route label path.
func (m *metrics) instrument(path string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		h.ServeHTTP(rec, r)
		m.requests.WithLabelValues(path, strconv.Itoa(rec.code)).Inc()
		if rec.code >= 500 {
			m.errors.Inc()
		}
	})
}

// statusRecorder remembers the status code written through it.
type statusRecorder struct {
	http.ResponseWriter
	code    int
	written bool
}

func (r *statusRecorder) WriteHeader(code int) {
	if !r.written {
		r.code, r.written = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	r.written = true
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
