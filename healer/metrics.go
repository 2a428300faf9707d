package healer

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/rejuv-dev/rejuv/healer/admission"
	"github.com/rejuv-dev/rejuv/healer/crr"
	"github.com/rejuv-dev/rejuv/healer/pause"
	"github.com/rejuv-dev/rejuv/healer/recreatepolicy"
	"github.com/rejuv-dev/rejuv/healer/signals"
	"github.com/rejuv-dev/rejuv/healer/workingset"
)

// RegisterMetrics adds every metric of the manager's own to reg (Run adds
// them to controller-runtime's registry, beside its own). Those of a part
// the manager does not run (signals without Prometheus, the request
// controller beside OpenKruise) have no series.
func RegisterMetrics(reg prometheus.Registerer) {
	recreatepolicy.RegisterMetrics(reg)
	crr.RegisterMetrics(reg)
	admission.RegisterMetrics(reg)
	signals.RegisterMetrics(reg)
	workingset.RegisterMetrics(reg)
	pause.RegisterMetrics(reg)
}
