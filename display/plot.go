package display

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Series is one named line of a LinePlot. When X is nil the points are numbered 0, 1, ...
type Series struct {
	Name string
	X, Y []float64
}

// Plot is a line plot that renders as PNG and SVG (and a one-line text description).
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

func (p *Plot) build() (*plot.Plot, error) {
	pl := plot.New()
	pl.Title.Text = p.Title
	pl.X.Label.Text = p.XLabel
	pl.Y.Label.Text = p.YLabel
	pl.Add(plotter.NewGrid())
	for i, s := range p.Series {
		if s.X != nil && len(s.X) != len(s.Y) {
			return nil, fmt.Errorf("display: series %q has %d x values and %d y values", s.Name, len(s.X), len(s.Y))
		}
		pts := make(plotter.XYs, len(s.Y))
		for j, y := range s.Y {
			pts[j].X = float64(j)
			if s.X != nil {
				pts[j].X = s.X[j]
			}
			pts[j].Y = y
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return nil, fmt.Errorf("display: series %q: %w", s.Name, err)
		}
		line.Color = palette[i%len(palette)]
		line.Width = vg.Points(1.5)
		pl.Add(line)
		if s.Name != "" {
			pl.Legend.Add(s.Name, line)
		}
	}
	pl.Legend.Top = true
	return pl, nil
}

// Encode renders the plot in format "png" or "svg".
func (p *Plot) Encode(format string) ([]byte, error) {
	pl, err := p.build()
	if err != nil {
		return nil, err
	}
	w, h := p.Width, p.Height
	if w <= 0 || h <= 0 {
		w, h = 480, 300
	}
	wt, err := pl.WriterTo(vg.Points(w), vg.Points(h), format)
	if err != nil {
		return nil, fmt.Errorf("display: rendering plot %q as %s: %w", p.Title, format, err)
	}
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
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
