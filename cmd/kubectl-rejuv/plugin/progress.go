package plugin

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// progress shows what a follower sees: a line per event, each with the
// time since the start, and on a terminal a bar below them, redrawn as
// the counts change.
type progress struct {
	w        io.Writer
	terminal bool
	label    string
	start    time.Time
	now      func() time.Time

	drawn                         bool
	done, total, inFlight, failed int
}

func newProgress(w io.Writer, terminal bool, label string, now func() time.Time) *progress {
	return &progress{w: w, terminal: terminal, label: label, start: now(), now: now}
}

// event prints one line; its arguments are made printable (see
// printable).
func (p *progress) event(format string, args ...any) {
	p.clear()
	printf(p.w, "[%5s] "+format+"\n", append([]any{p.elapsed()}, args...)...)
	p.draw()
}

// counts sets the bar's figures and redraws it.
func (p *progress) counts(done, total, inFlight, failed int) {
	p.done, p.total, p.inFlight, p.failed = done, total, inFlight, failed
	p.clear()
	p.draw()
}

// tick redraws the bar, for its clock.
func (p *progress) tick() {
	p.clear()
	p.draw()
}

// finish leaves the bar off the screen.
func (p *progress) finish() { p.clear() }

func (p *progress) elapsed() string {
	return p.now().Sub(p.start).Round(time.Second).String()
}

const barWidth = 24

func (p *progress) draw() {
	if !p.terminal || p.total == 0 {
		return
	}
	filled := barWidth * min(p.done, p.total) / p.total
	bar := strings.Repeat("#", filled) + strings.Repeat("-", barWidth-filled)
	fmt.Fprintf(p.w, "%s [%s] %d/%d pods, %d recreating, %d failed, %s", p.label, bar, p.done, p.total, p.inFlight, p.failed, p.elapsed())
	p.drawn = true
}

func (p *progress) clear() {
	if p.drawn {
		// Back to the line's start, and erase it.
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}
