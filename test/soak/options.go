package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// options are what a run is asked for, from the environment.
type options struct {
	// duration is how long load and faults run; the checks go on while
	// the cluster settles afterwards.
	duration time.Duration
	// seed drives every random choice: the faults, their targets and
	// moments, the load's. Printed first, so that a run can be replayed.
	seed int64
	// evidence is the directory the run's log, faults and violations are
	// written to.
	evidence string
}

// The bounds of SOAK_DURATION: shorter leaves no time for a fault to
// land in a rolling run; longer than a day is a mistake.
const (
	minDuration = time.Minute
	maxDuration = 24 * time.Hour
)

// readOptions reads SOAK_DURATION (default 30m), SOAK_SEED (default: from
// the clock) and SOAK_EVIDENCE (default .cache/soak/SEED under root).
func readOptions(root string, now time.Time) (options, error) {
	o := options{duration: 30 * time.Minute, seed: now.UnixNano() % 1_000_000_000}
	if v := os.Getenv("SOAK_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return o, fmt.Errorf("SOAK_DURATION=%q: not a duration such as 30m or 1h", v)
		}
		if d < minDuration || d > maxDuration {
			return o, fmt.Errorf("SOAK_DURATION=%s: must be between %s and %s", d, minDuration, maxDuration)
		}
		o.duration = d
	}
	if v := os.Getenv("SOAK_SEED"); v != "" {
		s, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return o, fmt.Errorf("SOAK_SEED=%q: not an integer", v)
		}
		o.seed = s
	}
	o.evidence = os.Getenv("SOAK_EVIDENCE")
	if o.evidence == "" {
		o.evidence = filepath.Join(root, ".cache", "soak", fmt.Sprintf("%d-%s", o.seed, now.Format("20060102-150405")))
	}
	return o, nil
}
