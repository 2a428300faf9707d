package twins

import (
	"time"

	"github.com/rejuv-dev/rejuv/policy"
)

// stuckStartup is stuck-startup.rego's twin.
type stuckStartup struct {
	cutoff        *cutoff
	thresholdText string
}

func newStuckStartup(params map[string]any) policy.NativeRule {
	startupFor := numberParam(params, "startupFor")
	return &stuckStartup{cutoff: newCutoff(startupFor), thresholdText: policy.FormatDurationNumber(startupFor)}
}

func (r *stuckStartup) Judge(c *policy.NativeContainer, now time.Time) policy.NativeVerdict {
	var v policy.NativeVerdict
	if c.State != "running" {
		return v
	}
	switch {
	case c.Started < 0:
		v.NoData = []string{"started"}
		return v
	case c.Started == 1:
		return v
	case c.StartedAt == 0:
		v.NoData = []string{"startedAt"}
		return v
	}
	if !atOrBefore(c.StartedAt, r.cutoff.at(now)) {
		return v
	}
	v.Recreate, v.Force = true, true
	v.Reason = "startup not finished " + since(now, c.StartedAt) + " after the container started (threshold " + r.thresholdText + ")"
	return v
}
