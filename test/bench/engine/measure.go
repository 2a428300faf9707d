package engine

import (
	"cmp"
	"runtime"
	"slices"
	"time"

	"github.com/rejuv-dev/rejuv/policy"
)

// Measure is one way's pass over pods on one core.
type Measure struct {
	Pods   int
	Took   time.Duration
	Allocs uint64 // a pod
	Bytes  uint64 // allocated a pod
	Hits   int    // matches found
}

// PerSecond is the pods evaluated a second.
func (m Measure) PerSecond() float64 { return float64(m.Pods) / m.Took.Seconds() }

// PerPod is the time a pod.
func (m Measure) PerPod() time.Duration { return m.Took / time.Duration(max(m.Pods, 1)) }

// Run measures f over n pods on one core; f returns the matches it found.
func Run(n int, f func(i int) int) Measure {
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	hits := 0
	for i := range n {
		hits += f(i)
	}
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	return Measure{Pods: n, Took: took, Allocs: (after.Mallocs - before.Mallocs) / uint64(n), Bytes: (after.TotalAlloc - before.TotalAlloc) / uint64(n), Hits: hits}
}

// Matches counts the matches of an evaluation's results; the first rule's
// error, if any, is returned with them.
func Matches(res []policy.RuleResult) (int, error) {
	n := 0
	var err error
	for _, r := range res {
		if r.Err != nil && err == nil {
			err = r.Err
		}
		n += len(r.Matches)
	}
	return n, err
}

// Median is the measure of median time: these machines are noisy.
func Median(ms []Measure) Measure {
	sorted := slices.SortedFunc(slices.Values(ms), func(a, b Measure) int { return cmp.Compare(a.Took, b.Took) })
	return sorted[len(sorted)/2]
}
