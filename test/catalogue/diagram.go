package catalogue

import (
	"fmt"
	"strings"
)

// Diagram is a picture of boxes grouped in regions and labelled arrows
// between them, laid out by hand in pixels; SVG draws it.
type Diagram struct {
	// Title and Desc say what the picture shows, for those who cannot
	// see it (the SVG's <title> and <desc>).
	Title, Desc   string
	Width, Height int
	Regions       []Region
	Arrows        []Arrow
}

// Region is a group of boxes under a title: a workload, a node, a party.
type Region struct {
	Title, Subtitle string
	X, Y, W, H      int
	// Fill and Stroke are the region's light background and its border.
	Fill, Stroke string
	Boxes        []Box
}

// Box is one part: a title and a line or two of what it does.
type Box struct {
	Title      string
	Lines      []string
	X, Y, W, H int
}

// Arrow is a line through Points, its head at the last, labelled with
// what flows along it.
type Arrow struct {
	Points []Point
	Label  Label
}

// Point is a position in pixels from the top left corner.
type Point struct{ X, Y int }

// Label is lines of text whose first baseline starts (or, with End,
// ends) at X, Y.
type Label struct {
	Lines []string
	X, Y  int
	End   bool
}

// The text's sizes and places, shared by SVG and the layout's checks.
const (
	fontFamily     = "'Segoe UI', Helvetica, Arial, 'Liberation Sans', 'DejaVu Sans', sans-serif"
	titleSize      = 13 // region and box titles, bold
	textSize       = 12 // every other line
	lineStep       = 16 // from one baseline to the next
	regionPadX     = 14 // a region's title from its left edge
	regionTitleY   = 21 // a region's title's baseline from its top
	regionSubY     = 38 // a region's subtitle's baseline from its top
	boxPadX        = 10 // a box's text from its left edge
	boxTitleY      = 20 // a box's title's baseline from its top
	textColor      = "#1b1f24"
	labelColor     = "#1f3b63"
	arrowColor     = "#3d4650"
	boxStroke      = "#7d8896"
	boxFill        = "#ffffff"
	backgroundFill = "#ffffff"
)

// SVG draws the diagram: the same bytes for the same diagram.
func (d Diagram) SVG() string {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-labelledby="title desc">`+"\n",
		d.Width, d.Height, d.Width, d.Height)
	fmt.Fprintf(&b, "<title id=\"title\">%s</title>\n<desc id=\"desc\">%s</desc>\n", escape(d.Title), escape(d.Desc))
	fmt.Fprintf(&b, `<defs><marker id="head" viewBox="0 0 10 10" refX="10" refY="5" markerUnits="userSpaceOnUse" markerWidth="10" markerHeight="10" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="%s"/></marker></defs>`+"\n", arrowColor)
	// A background of its own, so that the dark text stays legible on a
	// page with a dark theme.
	fmt.Fprintf(&b, "<rect width=\"%d\" height=\"%d\" fill=\"%s\"/>\n", d.Width, d.Height, backgroundFill)
	fmt.Fprintf(&b, "<g font-family=\"%s\" font-size=\"%d\" fill=\"%s\">\n", fontFamily, textSize, textColor)
	for _, r := range d.Regions {
		r.svg(&b)
	}
	for _, a := range d.Arrows {
		a.svg(&b)
	}
	b.WriteString("</g>\n</svg>\n")
	return b.String()
}

func (r Region) svg(b *strings.Builder) {
	fmt.Fprintf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"10\" fill=\"%s\" stroke=\"%s\" stroke-width=\"1.5\"/>\n",
		r.X, r.Y, r.W, r.H, r.Fill, r.Stroke)
	fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\" font-size=\"%d\" font-weight=\"bold\">%s</text>\n",
		r.X+regionPadX, r.Y+regionTitleY, titleSize, escape(r.Title))
	if r.Subtitle != "" {
		fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\">%s</text>\n", r.X+regionPadX, r.Y+regionSubY, escape(r.Subtitle))
	}
	for _, x := range r.Boxes {
		x.svg(b)
	}
}

func (x Box) svg(b *strings.Builder) {
	fmt.Fprintf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"6\" fill=\"%s\" stroke=\"%s\"/>\n",
		x.X, x.Y, x.W, x.H, boxFill, boxStroke)
	fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\" font-size=\"%d\" font-weight=\"bold\">%s</text>\n",
		x.X+boxPadX, x.Y+boxTitleY, titleSize, escape(x.Title))
	for i, l := range x.Lines {
		fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\">%s</text>\n", x.X+boxPadX, x.Y+boxTitleY+lineStep*(i+1), escape(l))
	}
}

func (a Arrow) svg(b *strings.Builder) {
	points := make([]string, len(a.Points))
	for i, p := range a.Points {
		points[i] = fmt.Sprintf("%d,%d", p.X, p.Y)
	}
	fmt.Fprintf(b, "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\" marker-end=\"url(#head)\"/>\n",
		strings.Join(points, " "), arrowColor)
	anchor := "start"
	if a.Label.End {
		anchor = "end"
	}
	for i, l := range a.Label.Lines {
		fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"%s\" fill=\"%s\">%s</text>\n",
			a.Label.X, a.Label.Y+lineStep*i, anchor, labelColor, escape(l))
	}
}

// escape makes text safe inside an element.
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
