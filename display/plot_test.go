package display

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// TestWholeTicks checks that whole-number axes get whole-number labels only, at most
// eight of them, covering the range.
func TestWholeTicks(t *testing.T) {
	for _, r := range [][2]float64{{1, 5}, {0, 1}, {1, 30}, {-3, 7}, {1, 1000}, {1, 2}} {
		ticks := wholeTicks(r[0], r[1])
		if len(ticks) < 2 || len(ticks) > 9 {
			t.Errorf("%v: %d ticks", r, len(ticks))
		}
		for _, tk := range ticks {
			if tk.Value != math.Trunc(tk.Value) || tk.Label != fmt.Sprintf("%.0f", tk.Value) || tk.Value < r[0] || tk.Value > r[1] {
				t.Errorf("%v: tick %v %q", r, tk.Value, tk.Label)
			}
		}
	}
	// Epochs 1..5 of a history plot get the x ticks 1 2 3 4 5.
	pl, _, err := LinePlot("loss", "epoch", "loss", Series{Name: "loss", X: []float64{1, 2, 3, 4, 5}, Y: []float64{0.9, 0.5, 0.4, 0.35, 0.3}}).build()
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, tk := range pl.X.Tick.Marker.Ticks(1, 5) {
		labels = append(labels, tk.Label)
	}
	if got := strings.Join(labels, " "); got != "1 2 3 4 5" {
		t.Fatalf("epoch ticks %q", got)
	}
	if _, whole := pl.Y.Tick.Marker.(plot.TickerFunc); whole {
		t.Fatal("the fractional loss axis got whole-number ticks")
	}
}

// TestLegendPlacement checks that the legend goes to a corner no line crosses, and
// above the lines when they cross every corner.
func TestLegendPlacement(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5, 6, 7, 8}
	falling := []float64{2, 1.2, 0.8, 0.6, 0.5, 0.45, 0.42, 0.4}
	rising := []float64{0.4, 0.6, 0.7, 0.75, 0.8, 0.82, 0.84, 0.85}
	flat := func(v float64) []float64 { return []float64{v, v, v, v, v, v, v, v} }
	cases := []struct {
		name      string
		series    []Series
		top, left bool
		raised    bool
	}{
		{"loss falls: top right", []Series{{Name: "loss", X: x, Y: falling}, {Name: "val_loss", X: x, Y: falling}}, true, false, false},
		{"accuracy rises: top left", []Series{{Name: "accuracy", X: x, Y: rising}}, true, true, false},
		{"jumps, then saturates: bottom right", []Series{{Name: "a", X: []float64{1, 1.2, 1.4, 8}, Y: []float64{0, 0, 1, 1}}}, false, false, false},
		{"lines along top and bottom: raised", []Series{{Name: "high", X: x, Y: flat(1)}, {Name: "low", X: x, Y: flat(0)}}, true, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pl, lines, err := LinePlot("t", "epoch", "v", tc.series...).build()
			if err != nil {
				t.Fatal(err)
			}
			c, err := draw.NewFormattedCanvas(vg.Points(480), vg.Points(300), "png")
			if err != nil {
				t.Fatal(err)
			}
			dc := draw.New(c)
			ymax := pl.Y.Max
			placeLegend(pl, lines, dc)
			if pl.Legend.Top != tc.top || pl.Legend.Left != tc.left || (pl.Y.Max > ymax) != tc.raised {
				t.Fatalf("legend top=%v left=%v, y max %v -> %v", pl.Legend.Top, pl.Legend.Left, ymax, pl.Y.Max)
			}
			// Wherever it went, the legend's box is clear of every line.
			data := pl.DataCanvas(dc)
			box := pl.Legend.Rectangle(data)
			size := box.Size()
			corner := vg.Rectangle{Min: data.Min, Max: data.Min.Add(size)}
			if !tc.left {
				corner.Min.X, corner.Max.X = data.Max.X-size.X, data.Max.X
			}
			if tc.top {
				corner.Min.Y, corner.Max.Y = data.Max.Y-size.Y, data.Max.Y
			}
			if crosses(pl, &data, lines, corner) {
				t.Fatal("a line crosses the legend")
			}
		})
	}
}

// TestPlotsRender checks that a row of plots renders as side-by-side images, and that
// non-finite points are left out instead of failing the plot.
func TestPlotsRender(t *testing.T) {
	ps := Plots{
		LinePlot("Loss", "epoch", "loss", Series{Name: "loss", Y: []float64{1, math.NaN(), 0.5}}),
		LinePlot("Metrics", "epoch", "value", Series{Name: "accuracy", Y: []float64{0.5, 0.7, math.Inf(1)}}),
	}
	b := ps.MIMEBundle()
	h, _ := b["text/html"].(string)
	if strings.Count(h, "<img") != 2 || b["image/png"] == nil || !strings.Contains(b["text/plain"].(string), `LinePlot("Metrics"`) {
		t.Fatalf("bundle: %.200v", b)
	}
}
