package policyspec

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// Schedule is a parsed cron schedule in its time zone.
type Schedule struct {
	Cron             cron.Schedule
	Location         *time.Location
	StartingDeadline time.Duration
}

// Next is the first fire time after t, in the schedule's zone, with
// daylight-saving changes handled as cron does: a time the clocks skip
// fires at the jump, a time they pass twice fires the first time only.
func (s *Schedule) Next(t time.Time) time.Time {
	t = t.In(s.Location)
	next := s.Cron.Next(t)
	if jump, ok := s.skipped(t, next); ok {
		return jump
	}
	for repeated(next) {
		next = s.Cron.Next(next)
	}
	return next
}

// skipped finds a clock change between t and next that skips wall times,
// and reports the instant of the change when the schedule matches one of
// the skipped minutes.
func (s *Schedule) skipped(t, next time.Time) (time.Time, bool) {
	_, before := t.Zone()
	_, after := next.Zone()
	if next.IsZero() || after <= before {
		return time.Time{}, false
	}
	// The change: the last minute with the old offset, then the first
	// with the new one.
	lo, hi := t, next
	for hi.Sub(lo) > time.Minute {
		mid := lo.Add(hi.Sub(lo) / 2).Truncate(time.Minute)
		if mid.Equal(lo) {
			break
		}
		if _, off := mid.Zone(); off == before {
			lo = mid
		} else {
			hi = mid
		}
	}
	change := hi.Truncate(time.Minute)
	if _, off := change.Zone(); off == before {
		change = change.Add(time.Minute)
	}
	// The skipped wall times, read in the old offset: change .. change+gap.
	old := time.FixedZone("", before)
	for m := change.In(old); m.Before(change.In(old).Add(time.Duration(after-before) * time.Second)); m = m.Add(time.Minute) {
		if s.Cron.Next(m.Add(-time.Second)).Equal(m) && change.After(t) {
			return change, true
		}
	}
	return time.Time{}, false
}

// repeated reports whether x is the second time its wall clock reading
// occurs, after the clocks went back.
func repeated(x time.Time) bool {
	for _, d := range []time.Duration{30 * time.Minute, time.Hour, 2 * time.Hour} {
		y := x.Add(-d).In(x.Location())
		if y.Year() == x.Year() && y.YearDay() == x.YearDay() && y.Hour() == x.Hour() && y.Minute() == x.Minute() {
			return true
		}
	}
	return false
}

// Window is a parsed time window: the minutes its cron expression matches.
type Window struct {
	Cron     cron.Schedule
	Location *time.Location
}

// Contains reports whether the minute of t is inside the window.
func (w *Window) Contains(t time.Time) bool {
	minute := t.In(w.Location).Truncate(time.Minute)
	return w.Cron.Next(minute.Add(-time.Second)).Equal(minute)
}

// DefaultStartingDeadline applies when the stored object lacks one.
const DefaultStartingDeadline = 300 * time.Second

// MaxStartingDeadlineSeconds is the longest startingDeadlineSeconds, a
// week: a run missed by longer is stale. The CRD's validation marker
// repeats the number.
const MaxStartingDeadlineSeconds = 7 * 24 * 60 * 60

var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

func parseCron(expr string, fld *field.Path) (cron.Schedule, *field.Error) {
	if strings.Contains(expr, "TZ=") {
		return nil, field.Invalid(fld, expr, "set the time zone in timeZone, not in the expression")
	}
	s, err := cronParser.Parse(expr)
	if err != nil {
		return nil, field.Invalid(fld, expr, fmt.Sprintf("not a cron expression: %v (five fields: minute hour day-of-month month day-of-week, or @hourly, @daily, @every 1h...)", err))
	}
	// The parser looks five years ahead: a date that does not exist (30
	// February) never comes.
	if s.Next(time.Now()).IsZero() {
		return nil, field.Invalid(fld, expr, "never fires: no date matches the day-of-month and month fields")
	}
	return s, nil
}

func parseLocation(name string, fld *field.Path) (*time.Location, *field.Error) {
	if name == "" {
		return time.UTC, nil
	}
	if strings.EqualFold(name, "local") {
		return nil, field.Invalid(fld, name, "name an IANA time zone such as Europe/Berlin; Local depends on the manager's machine")
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, field.Invalid(fld, name, "unknown time zone (an IANA name such as Europe/Berlin or UTC)")
	}
	return loc, nil
}

func parseSchedule(s *v1alpha1.Schedule, fld *field.Path) (*Schedule, field.ErrorList) {
	var errs field.ErrorList
	c, err := parseCron(s.Cron, fld.Child("cron"))
	if err != nil {
		errs = append(errs, err)
	}
	loc, err := parseLocation(s.TimeZone, fld.Child("timeZone"))
	if err != nil {
		errs = append(errs, err)
	}
	deadline := DefaultStartingDeadline
	if s.StartingDeadlineSeconds != nil {
		switch d := *s.StartingDeadlineSeconds; {
		case d < 1:
			errs = append(errs, field.Invalid(fld.Child("startingDeadlineSeconds"), d, "must be at least 1"))
		case d > MaxStartingDeadlineSeconds:
			errs = append(errs, field.Invalid(fld.Child("startingDeadlineSeconds"), d, fmt.Sprintf("must be at most %d seconds (a week)", MaxStartingDeadlineSeconds)))
		}
		deadline = v1beta1.SecondsDuration(*s.StartingDeadlineSeconds)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return &Schedule{Cron: c, Location: loc, StartingDeadline: deadline}, nil
}

func parseWindow(w *v1alpha1.Window, fld *field.Path) (*Window, field.ErrorList) {
	var errs field.ErrorList
	c, err := parseCron(w.Cron, fld.Child("cron"))
	if err != nil {
		errs = append(errs, err)
	}
	loc, err := parseLocation(w.TimeZone, fld.Child("timeZone"))
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return &Window{Cron: c, Location: loc}, nil
}

// ShortestGap is the shortest time between two of the schedule's next
// runs after t, over its next 100 runs; zero when it has fewer than two.
func (s *Schedule) ShortestGap(t time.Time) time.Duration {
	var shortest time.Duration
	prev := s.Next(t)
	for range 100 {
		next := s.Next(prev)
		if prev.IsZero() || next.IsZero() {
			break
		}
		if gap := next.Sub(prev); shortest == 0 || gap < shortest {
			shortest = gap
		}
		prev = next
	}
	return shortest
}
