package pause

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// pausedGauge is 1 while the leader finds Rejuv paused.
var pausedGauge = prometheus.NewGauge(prometheus.GaugeOpts{
	Name: "rejuv_paused",
	Help: "1 while Rejuv is paused cluster-wide by its emergency stop (the ConfigMap rejuv-pause in the manager's namespace), as the leader last saw it; 0 otherwise.",
})

// RegisterMetrics adds the package's metrics to reg.
func RegisterMetrics(reg prometheus.Registerer) {
	reg.MustRegister(pausedGauge)
}

// paused is what the leader last found.
var paused atomic.Bool

// observed records whether Rejuv is paused, in the gauge too, and says
// whether it was before.
func observed(now bool) (was bool) {
	was = paused.Swap(now)
	if now {
		pausedGauge.Set(1)
	} else {
		pausedGauge.Set(0)
	}
	return was
}
