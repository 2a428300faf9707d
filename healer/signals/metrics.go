package signals

import (
	"github.com/prometheus/client_golang/prometheus"
)

// queries counts the signal queries by result (ok, error).
var queries = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "rejuv_signal_queries_total",
	Help: "Queries of policies' signals sent to Prometheus, by result (ok, error).",
}, []string{"result"})

// RegisterMetrics adds the signal metrics to reg.
func RegisterMetrics(reg prometheus.Registerer) {
	reg.MustRegister(queries)
}

func observe(err error) {
	result := "ok"
	if err != nil {
		result = "error"
	}
	queries.WithLabelValues(result).Inc()
}
