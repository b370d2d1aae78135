package display

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Series is one named line of a LinePlot. When X is nil the points are numbered 0, 1, ...
// NaN and infinite points are left out of the line.
type Series struct {
	Name string
	X, Y []float64
}

// Plot is a line plot that renders as PNG and SVG (and a one-line text description).
// The legend goes in a corner that no line crosses, or above the lines when every
// corner is taken; an axis whose values are all whole numbers (epochs, counts) gets
// whole-number ticks.
type Plot struct {
	Title, XLabel, YLabel string
	Series                []Series
	// Width and Height of the image in points (defaults 480 by 300).
	Width, Height float64
}

// LinePlot returns a line plot of the series with a title and axis labels.
func LinePlot(title, xlabel, ylabel string, series ...Series) *Plot {
	return &Plot{Title: title, XLabel: xlabel, YLabel: ylabel, Series: series, Width: 480, Height: 300}
}

// palette holds the line colours, chosen to stay distinct for the first few series.
var palette = []color.RGBA{
	{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255},
	{148, 103, 189, 255}, {140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255},
}

// points returns the finite points of s.
func (s Series) points() (plotter.XYs, error) {
	if s.X != nil && len(s.X) != len(s.Y) {
		return nil, fmt.Errorf("display: series %q has %d x values and %d y values", s.Name, len(s.X), len(s.Y))
	}
	pts := make(plotter.XYs, 0, len(s.Y))
	for j, y := range s.Y {
		x := float64(j)
		if s.X != nil {
			x = s.X[j]
		}
		if finite(x) && finite(y) {
			pts = append(pts, plotter.XY{X: x, Y: y})
		}
	}
	return pts, nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// build makes the gonum plot and returns the points of its lines.
func (p *Plot) build() (*plot.Plot, []plotter.XYs, error) {
	pl := plot.New()
	pl.Title.Text = p.Title
	pl.X.Label.Text = p.XLabel
	pl.Y.Label.Text = p.YLabel
	pl.Add(plotter.NewGrid())
	var lines []plotter.XYs
	for i, s := range p.Series {
		pts, err := s.points()
		if err != nil {
			return nil, nil, err
		}
		if len(pts) == 0 {
			continue
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return nil, nil, fmt.Errorf("display: series %q: %w", s.Name, err)
		}
		line.Color = palette[i%len(palette)]
		line.Width = vg.Points(1.5)
		pl.Add(line)
		if s.Name != "" {
			pl.Legend.Add(s.Name, line)
		}
		lines = append(lines, pts)
	}
	if wholeNumbers(lines, func(p plotter.XY) float64 { return p.X }) {
		pl.X.Tick.Marker = plot.TickerFunc(wholeTicks)
	}
	if wholeNumbers(lines, func(p plotter.XY) float64 { return p.Y }) {
		pl.Y.Tick.Marker = plot.TickerFunc(wholeTicks)
	}
	return pl, lines, nil
}

// wholeNumbers reports whether the coordinate of every point is a whole number.
func wholeNumbers(lines []plotter.XYs, coord func(plotter.XY) float64) bool {
	for _, pts := range lines {
		for _, p := range pts {
			if v := coord(p); v != math.Trunc(v) || math.Abs(v) > 1<<53 {
				return false
			}
		}
	}
	return len(lines) > 0
}

// wholeTicks marks whole numbers only: steps of 1, 2, 5, 10, 20, 50, ... with at most
// eight labelled ticks, so epochs read 1, 2, 3 and never 1.5.
func wholeTicks(lo, hi float64) []plot.Tick {
	step := 1.0
	for (hi-lo)/step > 8 {
		switch d := step / math.Pow(10, math.Floor(math.Log10(step))); d {
		case 1:
			step *= 2
		case 2:
			step *= 2.5
		default:
			step *= 2
		}
	}
	var ticks []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: fmt.Sprintf("%.0f", v)})
	}
	return ticks
}

// placeLegend puts the legend of pl in the first corner of the data area that none of
// lines crosses (top right, top left, bottom right, bottom left), or, when every corner
// is crossed, raises the top of the y axis to make a free band for it above the lines.
// c is the canvas the plot will be drawn on.
func placeLegend(pl *plot.Plot, lines []plotter.XYs, c draw.Canvas) {
	if len(lines) == 0 {
		return
	}
	data := pl.DataCanvas(c)
	size := pl.Legend.Rectangle(data).Size()
	margin := vg.Points(4)
	size.X += 2 * margin
	size.Y += 2 * margin
	for _, corner := range []struct{ top, left bool }{{true, false}, {true, true}, {false, false}, {false, true}} {
		box := vg.Rectangle{Min: data.Min, Max: data.Min.Add(size)}
		if !corner.left {
			box.Min.X, box.Max.X = data.Max.X-size.X, data.Max.X
		}
		if corner.top {
			box.Min.Y, box.Max.Y = data.Max.Y-size.Y, data.Max.Y
		}
		if !crosses(pl, &data, lines, box) {
			pl.Legend.Top, pl.Legend.Left = corner.top, corner.left
			pl.Legend.XOffs, pl.Legend.YOffs = margin, -margin
			if !corner.left {
				pl.Legend.XOffs = -margin
			}
			if !corner.top {
				pl.Legend.YOffs = margin
			}
			return
		}
	}
	// Every corner is crossed: the lines keep the lower part of the height, the legend
	// gets the band above them.
	height := float64(data.Max.Y - data.Min.Y)
	free := float64(size.Y)
	if height <= free {
		pl.Legend.Top = true
		return
	}
	pl.Y.Max = pl.Y.Min + (pl.Y.Max-pl.Y.Min)*height/(height-free)
	pl.Legend.Top, pl.Legend.Left = true, false
	pl.Legend.XOffs, pl.Legend.YOffs = -margin, -margin
}

// crosses reports whether a line of lines passes through box (canvas coordinates of
// the data area data): every segment is sampled finely enough to hit a legend-sized box.
func crosses(pl *plot.Plot, data *draw.Canvas, lines []plotter.XYs, box vg.Rectangle) bool {
	tx, ty := pl.Transforms(data)
	inside := func(x, y vg.Length) bool {
		return x >= box.Min.X && x <= box.Max.X && y >= box.Min.Y && y <= box.Max.Y
	}
	for _, pts := range lines {
		for i := range pts {
			x0, y0 := tx(pts[i].X), ty(pts[i].Y)
			if inside(x0, y0) {
				return true
			}
			if i == 0 {
				continue
			}
			x1, y1 := tx(pts[i-1].X), ty(pts[i-1].Y)
			const samples = 64
			for k := 1; k < samples; k++ {
				f := vg.Length(k) / samples
				if inside(x0+(x1-x0)*f, y0+(y1-y0)*f) {
					return true
				}
			}
		}
	}
	return false
}

// Encode renders the plot in format "png" or "svg".
func (p *Plot) Encode(format string) ([]byte, error) {
	pl, lines, err := p.build()
	if err != nil {
		return nil, err
	}
	w, h := p.Width, p.Height
	if w <= 0 || h <= 0 {
		w, h = 480, 300
	}
	c, err := draw.NewFormattedCanvas(vg.Points(w), vg.Points(h), format)
	if err != nil {
		return nil, fmt.Errorf("display: rendering plot %q as %s: %w", p.Title, format, err)
	}
	dc := draw.New(c)
	placeLegend(pl, lines, dc)
	pl.Draw(dc)
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("display: rendering plot %q as %s: %w", p.Title, format, err)
	}
	return buf.Bytes(), nil
}

// String describes the plot in one line, its text fallback.
func (p *Plot) String() string {
	return fmt.Sprintf("LinePlot(%q, %d series)", p.Title, len(p.Series))
}

// MIMEBundle renders the plot as PNG and SVG; on a rendering error the bundle holds only
// text naming the error.
func (p *Plot) MIMEBundle() map[string]any {
	png, err := p.Encode("png")
	if err != nil {
		return Bundle{"text/plain": err.Error()}
	}
	svg, err := p.Encode("svg")
	if err != nil {
		return Bundle{"text/plain": err.Error()}
	}
	return Bundle{
		"image/png":     base64.StdEncoding.EncodeToString(png),
		"image/svg+xml": string(svg),
		"text/plain":    p.String(),
	}
}

// Plots is a row of plots (a training history's loss and metric plots). As a cell's
// value it renders as the plots side by side; index it for one plot.
type Plots []*Plot

// String lists the plots, one line each: the text fallback.
func (ps Plots) String() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// MIMEBundle renders the plots as HTML images side by side, with the first plot as
// image/png for front ends without HTML; on a rendering error it holds text naming it.
func (ps Plots) MIMEBundle() map[string]any {
	b := Bundle{"text/plain": ps.String()}
	var sb strings.Builder
	for i, p := range ps {
		png, err := p.Encode("png")
		if err != nil {
			return Bundle{"text/plain": ps.String() + "\n(plot: " + err.Error() + ")"}
		}
		enc := base64.StdEncoding.EncodeToString(png)
		if i == 0 {
			b["image/png"] = enc
		}
		fmt.Fprintf(&sb, `<img style="display:inline-block" alt="%s" src="data:image/png;base64,%s"/>`, html.EscapeString(p.Title), enc)
	}
	if len(ps) > 0 {
		b["text/html"] = sb.String()
	}
	return b
}
