package memshapes

import (
	"fmt"
	"strings"
	"time"

	"github.com/rejuv-dev/rejuv/healer/backtest"
)

// limitFraction is the memory-leak rule's default: a leak must be
// recreated before its working set reaches this fraction of its limit.
const limitFraction = 0.9

// Outcome is what happened to a shape in a replay: the instances the
// kernel killed on the way, and whether the rule recreated the container.
type Outcome struct {
	// Kills are the ages at which instances reached the limit.
	Kills     []time.Duration
	Recreated bool
	// Age is the recreated instance's age then, Bytes its working set.
	Age    time.Duration
	Bytes  int64
	Reason string
}

// Met reports whether the outcome is what the shape must get.
func (o Outcome) Met(s Shape) bool {
	if s.Kills > 1 {
		panic("a shape may lose at most its first instance")
	}
	if len(o.Kills) > s.Kills {
		return false
	}
	if !s.Leak {
		return !o.Recreated
	}
	return o.Recreated && float64(o.Bytes) < limitFraction*float64(s.Limit)
}

// String says the outcome in a table's words.
func (o Outcome) String(s Shape) string {
	var out strings.Builder
	for _, k := range o.Kills {
		fmt.Fprintf(&out, "killed by the kernel after %s; ", round(k))
	}
	if o.Recreated {
		fmt.Fprintf(&out, "recreated after %s at %dMi (%.0f%% of the limit)", round(o.Age), o.Bytes/Mi, 100*float64(o.Bytes)/float64(s.Limit))
	} else {
		fmt.Fprintf(&out, "not recreated in %s", round(s.For))
	}
	return out.String()
}

// round is a duration to the minute, as "1h5m".
func round(d time.Duration) string {
	return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
}

// OutcomeOf is a backtest's result for a container as a replay's
// outcome: the kills before the first recreation, and that one.
func OutcomeOf(res backtest.ContainerResult) Outcome {
	var out Outcome
	first := time.Time{}
	if len(res.Recreations) > 0 {
		r := res.Recreations[0]
		first = r.At
		out.Recreated, out.Age, out.Bytes, out.Reason = true, r.Age.Duration, r.WorkingSetBytes, r.Reason
	}
	for _, k := range res.Kills {
		if first.IsZero() || k.At.Before(first) {
			out.Kills = append(out.Kills, k.Age.Duration)
		}
	}
	return out
}
