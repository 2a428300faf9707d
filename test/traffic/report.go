package traffic

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Report is a stopped stream's outcome, phase by phase in the order they
// began.
type Report struct {
	Phases []PhaseReport
	// Results are every request's, in the order they were answered.
	Results []Result
}

// PhaseReport sums up the requests sent in one phase.
type PhaseReport struct {
	Name          string
	Sent, Failed  int
	P50, P99, Max time.Duration
	// Errors counts the failures by what they said.
	Errors map[string]int
}

func newReport(phases []string, results []Result) *Report {
	r := &Report{Results: slices.Clone(results)}
	for _, name := range phases {
		if slices.ContainsFunc(r.Phases, func(p PhaseReport) bool { return p.Name == name }) {
			continue
		}
		p := PhaseReport{Name: name, Errors: map[string]int{}}
		var latencies []time.Duration
		for _, res := range results {
			if res.Phase != name {
				continue
			}
			p.Sent++
			if res.Err != "" {
				p.Failed++
				p.Errors[res.Err]++
				continue
			}
			latencies = append(latencies, res.Latency)
		}
		p.P50, p.P99, p.Max = quantile(latencies, 0.50), quantile(latencies, 0.99), quantile(latencies, 1)
		r.Phases = append(r.Phases, p)
	}
	return r
}

// quantile is the q-quantile of ds (nearest rank); 0 for none.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// Total is the whole stream's sent and failed requests.
func (r *Report) Total() (sent, failed int) {
	for _, p := range r.Phases {
		sent += p.Sent
		failed += p.Failed
	}
	return sent, failed
}

// Phase is the named phase's summary; a zero one when there was none.
func (r *Report) Phase(name string) PhaseReport {
	for _, p := range r.Phases {
		if p.Name == name {
			return p
		}
	}
	return PhaseReport{Name: name}
}

// Failures lists the distinct failures, most frequent first, as
// "N × error".
func (r *Report) Failures() []string {
	counts := map[string]int{}
	for _, p := range r.Phases {
		for e, n := range p.Errors {
			counts[e] += n
		}
	}
	errs := slices.Collect(maps.Keys(counts))
	slices.SortFunc(errs, func(a, b string) int { return cmp.Or(counts[b]-counts[a], strings.Compare(a, b)) })
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = fmt.Sprintf("%d × %s", counts[e], e)
	}
	return out
}

// LastAnswered is when the last request answered with body (its first
// line) was sent; the zero time when none was.
func (r *Report) LastAnswered(body string) time.Time {
	var last time.Time
	for _, res := range r.Results {
		if res.Err == "" && res.Body == body && res.Sent.After(last) {
			last = res.Sent
		}
	}
	return last
}
