package pause

import (
	"sync"

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

// pausedState is what the gauge says, with whether it changed.
type pausedState struct {
	mu  sync.Mutex
	now bool
}

var paused pausedState

// Swap sets the state and the gauge, and says what the state was.
func (p *pausedState) Swap(now bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	was := p.now
	p.now = now
	if now {
		pausedGauge.Set(1)
	} else {
		pausedGauge.Set(0)
	}
	return was
}
