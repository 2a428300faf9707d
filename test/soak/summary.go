package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rejuv-dev/rejuv/test/soak/invariant"
)

// summary is what a run prints at its end: the faults injected by kind,
// what the load and Rejuv did, the clients' totals, and the violations by
// invariant with where their evidence is.
type summary struct {
	seed          int64
	duration, ran time.Duration
	report        invariant.Report
	clients       clientTotals
	load          map[string]int
	notInjected   map[invariant.Fault]int
	settled       error
	evidence      string
}

// write prints the summary to w and the violations' evidence to
// violations.txt in the evidence directory.
func (s summary) write(w io.Writer, rec *recorder) error {
	path := filepath.Join(s.evidence, "violations.txt")
	if err := s.writeEvidence(path, rec); err != nil {
		return err
	}
	r := s.report
	fmt.Fprintf(w, "\nsoak: seed %d, %s of load and faults asked, %s run\n\n", s.seed, s.duration, s.ran.Round(time.Second))
	t := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(t, "fault\tinjected\tnot injected\t")
	total := 0
	for _, f := range invariant.Faults {
		fmt.Fprintf(t, "%s\t%d\t%d\t\n", f, r.Faults[f], s.notInjected[f])
		total += r.Faults[f]
	}
	fmt.Fprintf(t, "all\t%d\t\t\n", total)
	_ = t.Flush()

	fmt.Fprintln(w)
	t = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(t, "requests seen\t%d: %d succeeded, %d ended otherwise, %d not yet due\t\n", r.Requests, r.Succeeded, r.Failed, r.Unfinished)
	fmt.Fprintf(t, "runs completed\t%d\t\n", r.RunsCompleted)
	fmt.Fprintf(t, "container restarts seen\t%d\t\n", r.Restarts)
	fmt.Fprintf(t, "client requests\t%d: %d failed, %d of them while a fault made it unavoidable%s\t\n", s.clients.sent, s.clients.failed, sum(r.Explained), byKind(r.Explained))
	for _, k := range slices.Sorted(maps.Keys(s.load)) {
		fmt.Fprintf(t, "load: %s\t%d\t\n", k, s.load[k])
	}
	settled := "yes"
	if s.settled != nil {
		settled = s.settled.Error()
	}
	fmt.Fprintf(t, "settled afterwards\t%s\t\n", settled)
	_ = t.Flush()

	fmt.Fprintln(w)
	t = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(t, "invariant\tviolations\t")
	for _, inv := range invariant.Invariants {
		fmt.Fprintf(t, "%s\t%d\t\n", inv, r.ByInvariant[inv])
	}
	_ = t.Flush()
	for i, v := range r.Violations {
		fmt.Fprintf(w, "  #%d %s %s: %s: %s (%s#%d)\n", i+1, rec.offset(v.At), v.Invariant, v.Subject, v.What, path, i+1)
	}
	switch {
	case len(r.Violations) > 0:
		fmt.Fprintf(w, "\nsoak: FAILED: %d violations (seed %d); evidence in %s\n", len(r.Violations), s.seed, s.evidence)
	case s.settled != nil:
		fmt.Fprintf(w, "\nsoak: FAILED: the cluster did not settle (seed %d); evidence in %s\n", s.seed, s.evidence)
	default:
		fmt.Fprintf(w, "\nsoak: PASSED: no violation (seed %d)\n", s.seed)
	}
	return nil
}

// writeEvidence writes each violation, numbered as the summary lists
// them, with its evidence.
func (s summary) writeEvidence(path string, rec *recorder) error {
	var b strings.Builder
	for i, v := range s.report.Violations {
		fmt.Fprintf(&b, "#%d %s %s\n  subject: %s\n  what: %s\n", i+1, rec.offset(v.At), v.Invariant, v.Subject, v.What)
		for _, e := range v.Evidence {
			fmt.Fprintf(&b, "  %s\n", e)
		}
		b.WriteString("\n")
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func sum(m map[invariant.Fault]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func byKind(m map[invariant.Fault]int) string {
	var parts []string
	for _, f := range invariant.Faults {
		if m[f] > 0 {
			parts = append(parts, fmt.Sprintf("%s: %d", f, m[f]))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, ", ")
}
