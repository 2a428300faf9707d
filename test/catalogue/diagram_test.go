package catalogue

import (
	"fmt"
	"strings"
	"testing"
	"unicode"
)

// rect is an area of the picture in pixels, named for the messages.
type rect struct {
	x0, y0, x1, y1 float64
	what           string
}

func (r rect) overlaps(o rect) bool {
	return r.x0 < o.x1 && o.x0 < r.x1 && r.y0 < o.y1 && o.y0 < r.y1
}

func (r rect) within(o rect) bool {
	return r.x0 >= o.x0 && r.x1 <= o.x1 && r.y0 >= o.y0 && r.y1 <= o.y1
}

func (r rect) grow(by float64) rect {
	return rect{r.x0 - by, r.y0 - by, r.x1 + by, r.y1 + by, r.what}
}

func boxRect(x, y, w, h int, what string) rect {
	return rect{float64(x), float64(y), float64(x + w), float64(y + h), what}
}

// emWidth is a character's advance in DejaVu Sans, the widest font of
// the list, rounded up: the checks hold for the narrower ones too.
func emWidth(r rune) float64 {
	switch {
	case strings.ContainsRune("mwMW", r):
		return 0.99
	case unicode.IsUpper(r):
		return 0.78
	case r == ' ' || strings.ContainsRune("ijl.,:;'|!", r):
		return 0.33
	case strings.ContainsRune("ftr()[]/-", r):
		return 0.42
	default:
		return 0.64
	}
}

// textRect is where a line of text lies, its baseline starting (or, with
// end, ending) at x, y.
func textRect(x, y int, s string, size int, bold, end bool) rect {
	em := 0.0
	for _, r := range s {
		em += emWidth(r)
	}
	if bold {
		em *= 1.1
	}
	w, fx, fy, fs := em*float64(size), float64(x), float64(y), float64(size)
	if end {
		fx -= w
	}
	return rect{fx, fy - 0.8*fs, fx + w, fy + 0.25*fs, fmt.Sprintf("%q", s)}
}

// headers are where a region's title and subtitle lie.
func (r Region) headers() []rect {
	rs := []rect{textRect(r.X+regionPadX, r.Y+regionTitleY, r.Title, titleSize, true, false)}
	if r.Subtitle != "" {
		rs = append(rs, textRect(r.X+regionPadX, r.Y+regionSubY, r.Subtitle, textSize, false, false))
	}
	return rs
}

// lines are where a box's title and lines lie.
func (x Box) lines() []rect {
	rs := []rect{textRect(x.X+boxPadX, x.Y+boxTitleY, x.Title, titleSize, true, false)}
	for i, l := range x.Lines {
		rs = append(rs, textRect(x.X+boxPadX, x.Y+boxTitleY+lineStep*(i+1), l, textSize, false, false))
	}
	return rs
}

// lines are where an arrow's label lies.
func (l Label) lines() []rect {
	var rs []rect
	for i, s := range l.Lines {
		rs = append(rs, textRect(l.X, l.Y+lineStep*i, s, textSize, false, l.End))
	}
	return rs
}

// segments are an arrow's straight parts, as thin areas.
func (a Arrow) segments() []rect {
	var rs []rect
	for i := 1; i < len(a.Points); i++ {
		p, q := a.Points[i-1], a.Points[i]
		rs = append(rs, rect{
			float64(min(p.X, q.X)), float64(min(p.Y, q.Y)), float64(max(p.X, q.X)), float64(max(p.Y, q.Y)),
			fmt.Sprintf("the arrow from %v to %v", p, q),
		})
	}
	return rs
}

// layoutProblems says where the diagram's parts overlap or leave the
// picture, or text leaves its box: empty when every label can be read.
func layoutProblems(d Diagram) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	canvas := boxRect(0, 0, d.Width, d.Height, "the picture")

	var boxes, headers []rect
	for i, r := range d.Regions {
		area := boxRect(r.X, r.Y, r.W, r.H, r.Title)
		if !area.within(canvas) {
			add("region %q leaves the picture", r.Title)
		}
		for _, o := range d.Regions[i+1:] {
			if area.overlaps(boxRect(o.X, o.Y, o.W, o.H, o.Title)) {
				add("regions %q and %q overlap", r.Title, o.Title)
			}
		}
		inner := rect{area.x0 + 2, area.y0, area.x1 - 2, area.y1 - 2, r.Title}
		top := area.y0
		for _, h := range r.headers() {
			if !h.within(inner) {
				add("the header %s leaves region %q", h.what, r.Title)
			}
			top = max(top, h.y1)
			headers = append(headers, h)
		}
		for _, x := range r.Boxes {
			b := boxRect(x.X, x.Y, x.W, x.H, fmt.Sprintf("box %q", x.Title))
			if !b.within(inner) || b.y0 < top+4 {
				add("box %q leaves region %q or meets its header", x.Title, r.Title)
			}
			textArea := rect{b.x0, b.y0, b.x1 - 4, b.y1 - 3, x.Title}
			for _, l := range x.lines() {
				if !l.within(textArea) {
					add("the line %s leaves box %q", l.what, x.Title)
				}
			}
			for _, o := range boxes {
				if b.grow(4).overlaps(o) {
					add("box %q and %s overlap", x.Title, o.what)
				}
			}
			boxes = append(boxes, b)
		}
	}

	var labels, segments []rect
	for _, a := range d.Arrows {
		if len(a.Points) < 2 {
			add("an arrow of %d points", len(a.Points))
			continue
		}
		for i, s := range a.segments() {
			if s.x0 != s.x1 && s.y0 != s.y1 {
				add("%s is not horizontal or vertical", s.what)
			}
			if last := i == len(a.Points)-2; last && max(s.x1-s.x0, s.y1-s.y0) < 20 {
				add("%s is too short to show its head", s.what)
			}
			for _, o := range append(boxes, headers...) {
				if s.overlaps(o.grow(-1)) {
					add("%s crosses %s", s.what, o.what)
				}
			}
			segments = append(segments, s)
		}
		labels = append(labels, a.Label.lines()...)
	}
	for i, l := range labels {
		if !l.within(canvas) {
			add("the label %s leaves the picture", l.what)
		}
		for _, o := range append(append(boxes, headers...), labels[i+1:]...) {
			if l.grow(2).overlaps(o) {
				add("the label %s overlaps %s", l.what, o.what)
			}
		}
		for _, s := range segments {
			if l.overlaps(s.grow(4)) {
				add("the label %s meets %s", l.what, s.what)
			}
		}
		for _, r := range d.Regions {
			area := boxRect(r.X, r.Y, r.W, r.H, r.Title)
			if l.grow(3).overlaps(area) && !l.grow(3).within(area) {
				add("the label %s crosses the border of region %q", l.what, r.Title)
			}
		}
	}
	return problems
}

// TestLayoutProblemsFindsOverlaps: the checks catch what they are for,
// so that a diagram they pass is one whose text can be read.
func TestLayoutProblemsFindsOverlaps(t *testing.T) {
	d := Diagram{
		Width: 400, Height: 300,
		Regions: []Region{{
			Title: "a region", X: 10, Y: 10, W: 200, H: 100,
			Boxes: []Box{{Title: "a box", X: 20, Y: 40, W: 60, H: 40, Lines: []string{"a line far too long for its box"}}},
		}},
		Arrows: []Arrow{
			{Points: []Point{{50, 200}, {50, 60}}, Label: Label{Lines: []string{"on the box"}, X: 30, Y: 60}},
			{Points: []Point{{300, 10}, {300, 200}}, Label: Label{Lines: []string{"off the picture's edge"}, X: 310, Y: 100}},
		},
	}
	got := strings.Join(layoutProblems(d), "\n")
	for _, want := range []string{
		`the line "a line far too long for its box" leaves box "a box"`,
		`crosses box "a box"`,
		`the label "on the box" overlaps box "a box"`,
		`the label "off the picture's edge" leaves the picture`,
		`the label "on the box" meets the arrow`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the problems miss %q; they are:\n%s", want, got)
		}
	}
}
