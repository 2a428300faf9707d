package memshapes

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// The lines around the table in docs/rules.md.
const (
	tableStart = "<!-- memory shapes: make docs writes this table from test/memshapes -->\n"
	tableEnd   = "<!-- end of memory shapes -->\n"
)

// table is the catalogue's table in Markdown: each shape, what it must get
// and what it got in its replays.
func table(shapes []Shape, outcomes [][]Outcome) string {
	var b strings.Builder
	b.WriteString("| shape | the app | limit | must be | replays at the defaults |\n|---|---|---|---|---|\n")
	for i, s := range shapes {
		must := "never recreated"
		if s.Leak {
			must = fmt.Sprintf("recreated before %.0f%%", 100*limitFraction)
		}
		if s.Kills == 1 {
			must = "its first instance may run out of memory; the next " + must
		}
		fmt.Fprintf(&b, "| %s | %s | %dMi | %s | %s |\n", s.Name, s.What, s.Limit/Mi, must, summary(s, outcomes[i]))
	}
	return b.String()
}

// summary says what a shape's replays got: the range of the ages and of
// the share of the limit at which they were recreated, or that none was.
func summary(s Shape, os []Outcome) string {
	var ages, kills []time.Duration
	var shares []int
	for _, o := range os {
		if len(o.Kills) > 0 {
			kills = append(kills, o.Kills[0].Round(time.Minute))
		}
		if !o.Recreated {
			continue
		}
		ages = append(ages, o.Age.Round(time.Minute))
		shares = append(shares, int(100*float64(o.Bytes)/float64(s.Limit)))
	}
	var out string
	if len(kills) > 0 {
		out = fmt.Sprintf("first instance killed by the kernel after %s; ", spread(kills, round))
	}
	if len(ages) == 0 {
		return out + fmt.Sprintf("not recreated in %s (%d replays)", round(s.For), len(os))
	}
	out += fmt.Sprintf("recreated after %s at %s of the limit",
		spread(ages, round), spread(shares, func(n int) string { return fmt.Sprintf("%d%%", n) }))
	if len(ages) < len(os) {
		out += fmt.Sprintf(" (%d of %d replays)", len(ages), len(os))
	}
	return out
}

// spread is the range of the values, or the one value.
func spread[T int | time.Duration](values []T, text func(T) string) string {
	lo, hi := slices.Min(values), slices.Max(values)
	if lo == hi {
		return text(lo)
	}
	return text(lo) + " to " + text(hi)
}

// withTable puts table between the table's lines of doc.
func withTable(t *testing.T, doc, table string) string {
	t.Helper()
	before, rest, ok := strings.Cut(doc, tableStart)
	_, after, ok2 := strings.Cut(rest, tableEnd)
	if !ok || !ok2 {
		t.Fatalf("docs/rules.md has no lines %q and %q around the table of memory shapes", tableStart, tableEnd)
	}
	return before + tableStart + table + tableEnd + after
}
