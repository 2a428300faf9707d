package twins

import (
	"time"

	"github.com/rejuv-dev/rejuv/policy"
)

// memoryLeak is memory-leak.rego's twin: each function below is the rule
// of the module with its name.
type memoryLeak struct {
	minGrowthPerHour, minObservation, minSamples, minFit, minSustained float64
	oomLifetimeFraction, limitFraction, growthHorizon, horizon         float64
	// Parameters as the reasons write them.
	minGrowthText, oomPercentText, limitPercentText, growthHorizonText, horizonText string
}

func newMemoryLeak(params map[string]any) policy.NativeRule {
	r := &memoryLeak{
		minGrowthPerHour: floatParam(params, "minGrowthPerHour"), minObservation: floatParam(params, "minObservation"),
		minSamples: floatParam(params, "minSamples"), minFit: floatParam(params, "minFit"), minSustained: floatParam(params, "minSustained"),
		oomLifetimeFraction: floatParam(params, "oomLifetimeFraction"), limitFraction: floatParam(params, "limitFraction"),
		growthHorizon: floatParam(params, "growthHorizon"), horizon: floatParam(params, "horizon"),
	}
	r.minGrowthText = policy.FormatBytesOf(r.minGrowthPerHour)
	r.oomPercentText = policy.FormatNumberOf(r.oomLifetimeFraction * 100)
	r.limitPercentText = policy.FormatNumberOf(r.limitFraction * 100)
	r.growthHorizonText = policy.FormatDurationOf(r.growthHorizon)
	r.horizonText = policy.FormatDurationOf(r.horizon)
	return r
}

func (r *memoryLeak) Judge(c *policy.NativeContainer, _ time.Time) policy.NativeVerdict {
	var v policy.NativeVerdict
	m := c.Memory
	if m == nil {
		v.NoData = []string{"memory"}
		return v
	}
	if !r.hasHistory(m) {
		if _, ok := lifetimeBefore(c); !ok {
			v.NoData = []string{"memory.history"}
		}
	}
	// recreate: the cheap comparisons first, as the module.
	if m.R2 < r.minFit || m.SlopeBytesPerSecond <= 0 || !r.judgeable(m) || !r.sustained(m) {
		return v
	}
	v.Reason, v.Recreate = r.why(c, m)
	return v
}

func (r *memoryLeak) why(c *policy.NativeContainer, m *policy.MemoryWindow) (string, bool) {
	if r.hasHistory(m) {
		if reason, ok := r.leakReason(c, m); ok {
			return reason, true
		}
	}
	return r.oomReason(c, m)
}

func (r *memoryLeak) hasHistory(m *policy.MemoryWindow) bool {
	return r.judgeable(m) && m.WindowSeconds >= r.minObservation
}

func (r *memoryLeak) judgeable(m *policy.MemoryWindow) bool {
	return float64(m.Samples) >= r.minSamples
}

// lifetimeBefore is how long the previous instance ran before the kernel
// killed it for running out of memory, in seconds.
func lifetimeBefore(c *policy.NativeContainer) (float64, bool) {
	t := c.LastTermination
	if t == nil || t.Reason != "OOMKilled" || t.StartedAt == 0 || t.FinishedAt == 0 {
		return 0, false
	}
	lifetime := float64(t.FinishedAt-t.StartedAt) / 1e9
	return lifetime, lifetime > 0
}

func (r *memoryLeak) oomReason(c *policy.NativeContainer, m *policy.MemoryWindow) (string, bool) {
	lifetime, ok := lifetimeBefore(c)
	if !ok || m.WindowSeconds < r.oomLifetimeFraction*lifetime {
		return "", false
	}
	return "the previous instance was killed for running out of memory after " + policy.FormatDurationOf(lifetime) +
		"; this one's working set, watched for " + policy.FormatDurationOf(m.WindowSeconds) +
		" (" + policy.FormatNumberOf(m.WindowSeconds*100/lifetime) + "% of that; threshold " + r.oomPercentText + "%), is " +
		policy.FormatBytesOf(float64(m.WorkingSetBytes)) + " and grows " + policy.FormatBytesOf(m.SlopeBytesPerSecond*3600) +
		"/h (r2 " + policy.FormatNumberOf(m.R2) + "; " + pace(m) + ")", true
}

func (r *memoryLeak) sustained(m *policy.MemoryWindow) bool {
	return m.EndSlopeBytesPerSecond > 0 &&
		m.EndSlopeBytesPerSecond >= r.minSustained*m.StartSlopeBytesPerSecond &&
		m.LatestSlopeBytesPerSecond >= r.minSustained*m.SlopeBytesPerSecond
}

func pace(m *policy.MemoryWindow) string {
	return policy.FormatBytesOf(m.StartSlopeBytesPerSecond*3600) + "/h at the window's start, " +
		policy.FormatBytesOf(m.EndSlopeBytesPerSecond*3600) + "/h at its end; the last " +
		policy.FormatDurationOf(m.WindowSeconds/6) + " " + policy.FormatBytesOf(m.LatestSlopeBytesPerSecond*3600) + "/h"
}

// growth is the part the growth's reasons share: "working set W grows
// S/h (r2 R over D; PACE".
func growth(m *policy.MemoryWindow) string {
	return "working set " + policy.FormatBytesOf(float64(m.WorkingSetBytes)) + " grows " + policy.FormatBytesOf(m.SlopeBytesPerSecond*3600) +
		"/h (r2 " + policy.FormatNumberOf(m.R2) + " over " + policy.FormatDurationOf(m.WindowSeconds) + "; " + pace(m)
}

func (r *memoryLeak) leakReason(c *policy.NativeContainer, m *policy.MemoryWindow) (string, bool) {
	if limit, ok := memoryLimit(c); ok {
		if reason, ok := r.limitReason(m, limit); ok {
			return reason, true
		}
		return r.growthReason(m, limit)
	}
	if !r.growsFast(m) {
		return "", false
	}
	return growth(m) + "; threshold " + r.minGrowthText + "/h)", true
}

func (r *memoryLeak) growsFast(m *policy.MemoryWindow) bool {
	return m.SlopeBytesPerSecond*3600 >= r.minGrowthPerHour && m.EndSlopeBytesPerSecond*3600 >= r.minGrowthPerHour
}

func (r *memoryLeak) growthReason(m *policy.MemoryWindow, limit float64) (string, bool) {
	if !r.growsFast(m) || float64(m.WorkingSetBytes)+m.SlopeBytesPerSecond*r.growthHorizon < r.limitFraction*limit {
		return "", false
	}
	return growth(m) + "; threshold " + r.minGrowthText + "/h) and reaches " + r.limitPercentText + "% of the " +
		policy.FormatBytesOf(limit) + " memory limit in " +
		policy.FormatDurationOf((r.limitFraction*limit-float64(m.WorkingSetBytes))/m.SlopeBytesPerSecond) +
		" (growthHorizon " + r.growthHorizonText + ")", true
}

func (r *memoryLeak) limitReason(m *policy.MemoryWindow, limit float64) (string, bool) {
	ws := float64(m.WorkingSetBytes)
	if ws >= r.limitFraction*limit {
		return "working set " + policy.FormatBytesOf(ws) + " is already " + policy.FormatNumberOf(ws*100/limit) + "% of the " +
			policy.FormatBytesOf(limit) + " memory limit and grows " + policy.FormatBytesOf(m.SlopeBytesPerSecond*3600) +
			"/h (r2 " + policy.FormatNumberOf(m.R2) + " over " + policy.FormatDurationOf(m.WindowSeconds) + "; " + pace(m) +
			"; threshold " + r.limitPercentText + "%)", true
	}
	if ws+m.SlopeBytesPerSecond*r.horizon < r.limitFraction*limit {
		return "", false
	}
	return growth(m) + ") and reaches " + r.limitPercentText + "% of the " + policy.FormatBytesOf(limit) + " memory limit in " +
		policy.FormatDurationOf((r.limitFraction*limit-ws)/m.SlopeBytesPerSecond) + " (horizon " + r.horizonText + ")", true
}

func memoryLimit(c *policy.NativeContainer) (float64, bool) {
	if !c.HasMemoryLimit || c.MemoryLimit <= 0 {
		return 0, false
	}
	return float64(c.MemoryLimit), true
}
