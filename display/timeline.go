package display

import (
	"fmt"
	"html"
	"math"
	"sort"
	"strings"
	"time"
)

// Timeline draws work on parallel lanes over time, a Gantt chart: what ran when on
// which device or queue, so that overlapping work shows as bars stacked in time.
type Timeline struct {
	Title string
	Lanes []string // top to bottom; lanes that spans name but this list lacks follow, in order of appearance
	Spans []Span
}

// Span is one piece of work on a lane, timed from the timeline's origin.
type Span struct {
	Lane, Label string
	Start, End  time.Duration
}

// lanes returns the lanes in drawing order.
func (t *Timeline) lanes() []string {
	out := append([]string(nil), t.Lanes...)
	seen := map[string]bool{}
	for _, l := range out {
		seen[l] = true
	}
	for _, s := range t.Spans {
		if !seen[s.Lane] {
			seen[s.Lane] = true
			out = append(out, s.Lane)
		}
	}
	return out
}

// end is the latest end of any span.
func (t *Timeline) end() time.Duration {
	var e time.Duration
	for _, s := range t.Spans {
		e = max(e, s.End)
	}
	return e
}

// spanColors colours bars by the first word of their label, in order of appearance.
var spanColors = []string{"#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#eeca3b", "#9d755d"}

// SVG renders the timeline as an SVG image: one row per lane, bars for spans, a time
// axis below.
func (t *Timeline) SVG() string {
	lanes := t.lanes()
	const width, left, right, laneH, top, axisH = 900.0, 170.0, 20.0, 30.0, 30.0, 36.0
	height := top + laneH*float64(max(len(lanes), 1)) + axisH
	total := t.end()
	if total <= 0 {
		total = time.Microsecond
	}
	step, unit, div := niceStep(total)
	x := func(d time.Duration) float64 { return left + (width-left-right)*float64(d)/float64(total) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`, width, height, width, height)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>`)
	if t.Title != "" {
		fmt.Fprintf(&b, `<text x="%.0f" y="18" font-size="14" font-weight="bold">%s</text>`, left, html.EscapeString(t.Title))
	}
	row := map[string]int{}
	for i, l := range lanes {
		row[l] = i
		y := top + laneH*float64(i)
		if i%2 == 0 {
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#f4f4f4"/>`, left, y, width-left-right, laneH)
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`, left-8, y+laneH/2+4, html.EscapeString(l))
	}
	colors := map[string]string{}
	for _, s := range t.Spans {
		kind, _, _ := strings.Cut(s.Label, " ")
		c, ok := colors[kind]
		if !ok {
			c = spanColors[len(colors)%len(spanColors)]
			colors[kind] = c
		}
		y := top + laneH*float64(row[s.Lane]) + 4
		x0, x1 := x(s.Start), x(s.End)
		w := math.Max(x1-x0, 1)
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" stroke="white" stroke-width="0.5"><title>%s: %s</title></rect>`,
			x0, y, w, laneH-8, c, html.EscapeString(s.Label), html.EscapeString(formatSpan(s, unit, div)))
		if label := fitLabel(s.Label, w); label != "" {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="white" font-size="11">%s</text>`, x0+3, y+(laneH-8)/2+4, html.EscapeString(label))
		}
	}
	axisY := top + laneH*float64(len(lanes))
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`, left, axisY, width-right, axisY)
	for d := time.Duration(0); d <= total; d += step {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`, x(d), axisY, x(d), axisY+5)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="11">%s</text>`, x(d), axisY+18, trimFloat(float64(d)/div))
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end" font-size="11">%s</text>`, width-right, axisY+32, unit)
	b.WriteString(`</svg>`)
	return b.String()
}

// fitLabel shortens a bar's label to what fits in w pixels, or "" when nothing does.
func fitLabel(label string, w float64) string {
	n := int((w - 6) / 6.5)
	if n >= len(label) {
		return label
	}
	if n < 4 {
		return ""
	}
	return label[:n-1] + "…"
}

// niceStep picks an axis step of 1, 2 or 5 times a power of ten giving 4 to 10 ticks,
// and the unit to print it in.
func niceStep(total time.Duration) (time.Duration, string, float64) {
	unit, div := "µs", float64(time.Microsecond)
	switch {
	case total >= 2*time.Second:
		unit, div = "s", float64(time.Second)
	case total >= 2*time.Millisecond:
		unit, div = "ms", float64(time.Millisecond)
	}
	raw := float64(total) / 6
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	step := p
	for _, m := range []float64{1, 2, 5, 10} {
		if p*m >= raw {
			step = p * m
			break
		}
	}
	return time.Duration(math.Max(step, 1)), unit, div
}

func trimFloat(v float64) string {
	s := fmt.Sprintf("%.3f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "" || s == "-0" {
		return "0"
	}
	return s
}

func formatSpan(s Span, unit string, div float64) string {
	return fmt.Sprintf("%s–%s %s (%s %s)", trimFloat(float64(s.Start)/div), trimFloat(float64(s.End)/div), unit, trimFloat(float64(s.End-s.Start)/div), unit)
}

// String renders the timeline as text: per lane, its spans in time order.
func (t *Timeline) String() string {
	_, unit, div := niceStep(max(t.end(), time.Microsecond))
	var b strings.Builder
	if t.Title != "" {
		b.WriteString(t.Title + "\n")
	}
	for _, l := range t.lanes() {
		var spans []Span
		for _, s := range t.Spans {
			if s.Lane == l {
				spans = append(spans, s)
			}
		}
		sort.SliceStable(spans, func(i, j int) bool { return spans[i].Start < spans[j].Start })
		fmt.Fprintf(&b, "%s:\n", l)
		for _, s := range spans {
			fmt.Fprintf(&b, "  %-32s %s\n", s.Label, formatSpan(s, unit, div))
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// MIMEBundle renders the timeline as SVG with the text form as fallback.
func (t *Timeline) MIMEBundle() map[string]any {
	return Bundle{"image/svg+xml": t.SVG(), "text/plain": t.String()}
}
