package scale

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// fleetSizing is how big the simulated cluster gets.
type fleetSizing struct {
	nodes, namespaces int
	// pods are the fleet's sizes, measured in turn.
	pods []int
	// settle is how long the fleet stays at a size before the manager is
	// measured: its policies evaluate (every 30 s by default) and its
	// caches fill.
	settle time.Duration
	// gogc, when set, is the manager's GOGC (its garbage collector's
	// target, the runtime's 100 by default): to weigh memory against CPU.
	gogc string
}

// scaleSizing reads REJUV_SCALE_NODES, REJUV_SCALE_NAMESPACES,
// REJUV_SCALE_SIZES, REJUV_SCALE_SETTLE and REJUV_SCALE_GOGC; a value that
// is not a positive number (a positive duration) stops the benchmark with
// a message naming the variable.
func scaleSizing() fleetSizing {
	s := fleetSizing{nodes: 1000, namespaces: 100, pods: []int{1000, 3000, 10000}, settle: 90 * time.Second}
	positive := func(name, v string) int {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n <= 0 {
			fmt.Fprintf(os.Stderr, "bench: %s=%q: want a positive number\n", name, v)
			os.Exit(2)
		}
		return n
	}
	if v := os.Getenv("REJUV_SCALE_NODES"); v != "" {
		s.nodes = positive("REJUV_SCALE_NODES", v)
	}
	if v := os.Getenv("REJUV_SCALE_NAMESPACES"); v != "" {
		s.namespaces = positive("REJUV_SCALE_NAMESPACES", v)
	}
	if v := os.Getenv("REJUV_SCALE_SIZES"); v != "" {
		s.pods = nil
		for f := range strings.SplitSeq(v, ",") {
			s.pods = append(s.pods, positive("REJUV_SCALE_SIZES", f))
		}
	}
	if v := os.Getenv("REJUV_SCALE_SETTLE"); v != "" {
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil || d <= 0 {
			fmt.Fprintf(os.Stderr, "bench: REJUV_SCALE_SETTLE=%q: want a positive duration (90s)\n", v)
			os.Exit(2)
		}
		s.settle = d
	}
	if v := os.Getenv("REJUV_SCALE_GOGC"); v != "" {
		s.gogc = strconv.Itoa(positive("REJUV_SCALE_GOGC", v))
	}
	return s
}
