package twins

import (
	"time"

	"github.com/rejuv-dev/rejuv/policy"
)

// stuckReadiness is stuck-readiness.rego's twin.
type stuckReadiness struct {
	cutoff        *cutoff
	thresholdText string
}

func newStuckReadiness(params map[string]any) policy.NativeRule {
	notReadyFor := numberParam(params, "notReadyFor")
	return &stuckReadiness{cutoff: newCutoff(notReadyFor), thresholdText: policy.FormatDurationNumber(notReadyFor)}
}

func (r *stuckReadiness) Judge(c *policy.NativeContainer, now time.Time) policy.NativeVerdict {
	var v policy.NativeVerdict
	// Running, not ready, and not known to be starting.
	if c.Ready || c.State != "running" || c.Started == 0 {
		return v
	}
	if c.NotReadySince == 0 {
		v.NoData = []string{"notReadySince"}
		return v
	}
	// not_ready_since_ns: the later of notReadySince and startedAt.
	sinceNs := c.NotReadySince
	if c.StartedAt != 0 {
		sinceNs = max(sinceNs, c.StartedAt)
	}
	if !atOrBefore(sinceNs, r.cutoff.at(now)) {
		return v
	}
	v.Recreate = true
	v.Reason = "not ready for " + since(now, sinceNs) + " (threshold " + r.thresholdText + ")"
	return v
}
