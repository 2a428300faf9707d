package twins

import (
	"strconv"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/rejuv-dev/rejuv/policy"
)

// restartStorm is restart-storm.rego's twin.
type restartStorm struct {
	cutoff      *cutoff
	minRestarts ast.Number
	windowText  string
}

func newRestartStorm(params map[string]any) policy.NativeRule {
	window := numberParam(params, "window")
	return &restartStorm{cutoff: newCutoff(window), minRestarts: numberParam(params, "minRestarts"), windowText: policy.FormatDurationNumber(window)}
}

func (r *restartStorm) Judge(c *policy.NativeContainer, now time.Time) policy.NativeVerdict {
	var v policy.NativeVerdict
	foreign := c.RestartCount - c.Recreations
	if ast.NumberCompare(integer(c.RestartCount), r.minRestarts) < 0 || ast.NumberCompare(integer(foreign), r.minRestarts) < 0 {
		return v
	}
	t := c.LastTermination
	if t == nil || t.FinishedAt == 0 {
		v.NoData = []string{"lastTermination.finishedAt"}
		return v
	}
	// finished_ns >= window_start_ns
	if ast.NumberCompare(integer(t.FinishedAt), r.cutoff.at(now)) < 0 {
		return v
	}
	cause := "exit code " + strconv.Itoa(int(t.ExitCode))
	if t.Reason != "" {
		cause = t.Reason + ", " + cause
	}
	v.Recreate = true
	v.Reason = "restarted " + strconv.FormatInt(foreign, 10) + " times besides Rejuv's recreations (threshold " + string(r.minRestarts) +
		"), the last " + since(now, t.FinishedAt) + " ago (" + cause + "; window " + r.windowText + ")"
	return v
}
