package plugin

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/rejuv-dev/rejuv/healer/backtest"
)

// backtestText renders backtest reports as tables: each report's events
// (recreations and OOM kills, in time order) and summary, then, for more
// than one report, their summaries side by side.
type backtestText struct {
	w io.Writer
}

func (t backtestText) render(reports []*backtest.Report) error {
	for i, r := range reports {
		if i > 0 {
			fmt.Fprintln(t.w)
		}
		if err := t.report(r); err != nil {
			return err
		}
	}
	if len(reports) > 1 {
		fmt.Fprintln(t.w)
		return t.compare(reports)
	}
	return nil
}

// variantName names a report's parameters.
func variantName(r *backtest.Report) string {
	if r.Variant == "" {
		return "as written"
	}
	return r.Variant
}

func (t backtestText) report(r *backtest.Report) error {
	printf(t.w, "RecreatePolicy %s (%s) from %s to %s: %d pods, %d containers; windows of %s sampled every %s\n",
		r.Policy, variantName(r), r.From.UTC().Format(time.RFC3339), r.To.UTC().Format(time.RFC3339), r.Pods, r.Containers,
		durationWords(r.Window.Duration), durationWords(r.Interval.Duration))
	type event struct {
		at   time.Time
		line string
	}
	var events []event
	for _, res := range r.Results {
		for _, rec := range res.Recreations {
			needed := "unneeded"
			if rec.Needed {
				needed = "needed"
			}
			events = append(events, event{rec.At, fmt.Sprintf("%s\t%s\t%s\trecreated (%s)\t%s\t%s\t%s\n", rec.At.UTC().Format(time.RFC3339), res.Pod, res.Container,
				needed, durationWords(rec.Age.Duration), ofLimit(rec.WorkingSetBytes, res.LimitBytes), rec.Reason)})
		}
		for _, k := range res.Kills {
			what := "missed"
			if k.Caught {
				what = "caught " + durationWords(k.LeadTime.Duration) + " before"
			}
			events = append(events, event{k.At, fmt.Sprintf("%s\t%s\t%s\tOOM kill\t%s\t\t%s\n", k.At.UTC().Format(time.RFC3339), res.Pod, res.Container, durationWords(k.Age.Duration), what)})
		}
	}
	slices.SortStableFunc(events, func(a, b event) int { return a.at.Compare(b.at) })
	if len(events) > 0 {
		tw := tabwriter.NewWriter(t.w, 0, 8, 2, ' ', 0)
		fmt.Fprint(tw, "AT\tPOD\tCONTAINER\tEVENT\tAGE\tWORKING SET\tWHY\n")
		for _, e := range events {
			fmt.Fprint(tw, e.line)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	s := r.Summary
	printf(t.w, "Summary: %d recreations; %d OOM kills, %d caught, %d missed; %d recreations no OOM kill followed (unneeded)\n",
		s.Recreations, s.Kills, s.Caught, s.Missed, s.Unneeded)
	if len(r.Held) > 0 {
		var held []string
		for outcome, n := range r.Held {
			held = append(held, fmt.Sprintf("%s %d", outcome, n))
		}
		slices.Sort(held)
		printf(t.w, "Held back by the gates: %s\n", strings.Join(held, ", "))
	}
	for _, n := range r.NotReplayed {
		printf(t.w, "Not replayed: rule %s: %s\n", n.Rule, n.Why)
	}
	if r.Coverage.Unmatched > 0 {
		printf(t.w, "Unmatched: %d pods in history: %s\n", r.Coverage.Unmatched, r.Coverage.UnmatchedWhy)
	}
	if r.Coverage.KillsUnknown != "" {
		printf(t.w, "OOM kills unknown: %s\n", r.Coverage.KillsUnknown)
	}
	for _, f := range r.Failures {
		printf(t.w, "Evaluation failed: %s\n", f)
	}
	return nil
}

// compare prints the reports' summaries side by side.
func (t backtestText) compare(reports []*backtest.Report) error {
	tw := tabwriter.NewWriter(t.w, 0, 8, 2, ' ', 0)
	header := []string{"POLICY", "PARAMETERS", "RECREATIONS", "OOM KILLS", "CAUGHT", "MISSED", "UNNEEDED"}
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range reports {
		s := r.Summary
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\n", r.Policy, variantName(r), s.Recreations, s.Kills, s.Caught, s.Missed, s.Unneeded)
	}
	return tw.Flush()
}

// ofLimit is a working set against its limit: 310Mi of 512Mi (61%).
func ofLimit(bytes, limit int64) string {
	ws := resource.NewQuantity(bytes, resource.BinarySI).String()
	if bytes >= 1<<20 {
		ws = fmt.Sprintf("%dMi", bytes>>20)
	}
	if limit <= 0 {
		return ws
	}
	return fmt.Sprintf("%s of %dMi (%.0f%%)", ws, limit>>20, 100*float64(bytes)/float64(limit))
}

// durationWords is a duration to the second without zero units: 1h5m,
// 30s.
func durationWords(d time.Duration) string {
	s := d.Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
