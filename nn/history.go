package nn

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gml-dev/gml/display"
)

// History records the logs of each epoch trained. As a notebook value it renders as a
// plot of the losses and of the metrics per epoch, train and validation, with a text
// table as the fallback.
type History struct {
	Epochs []int                // 0-based epoch numbers, in training order
	Values map[string][]float64 // per key ("loss", "val_accuracy", ...), one value per epoch
	keys   []string             // keys in the order first seen
}

func newHistory() *History { return &History{Values: map[string][]float64{}} }

// add appends one epoch's logs.
func (h *History) add(epoch int, logs Logs) {
	for _, k := range sortedKeys(logs) {
		if _, ok := h.Values[k]; !ok {
			h.keys = append(h.keys, k)
			// A key first seen late is padded so every series lines up with Epochs.
			h.Values[k] = make([]float64, len(h.Epochs))
		}
	}
	h.Epochs = append(h.Epochs, epoch)
	for _, k := range h.keys {
		v, ok := logs[k]
		if !ok {
			v = nan()
		}
		h.Values[k] = append(h.Values[k], v)
	}
}

// Keys lists the recorded quantities.
func (h *History) Keys() []string { return append([]string(nil), h.keys...) }

// Last returns the value of key after the last epoch (NaN when absent).
func (h *History) Last(key string) float64 {
	v := h.Values[key]
	if len(v) == 0 {
		return nan()
	}
	return v[len(v)-1]
}

// String renders the history as a text table, one row per epoch.
func (h *History) String() string {
	var b strings.Builder
	b.WriteString("epoch")
	for _, k := range h.keys {
		fmt.Fprintf(&b, "  %12s", k)
	}
	b.WriteByte('\n')
	for i, e := range h.Epochs {
		fmt.Fprintf(&b, "%5d", e+1)
		for _, k := range h.keys {
			format := "  %12.4f"
			if k == "lr" {
				format = "  %12.4g" // rates span decades: 1e-05, not 0.0000
			}
			fmt.Fprintf(&b, format, h.Values[k][i])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Plots returns the training curves: the losses, the metrics when there are any, and
// the learning rate when it changed. As a cell's value they render side by side;
// index them for one plot.
func (h *History) Plots() display.Plots {
	x := make([]float64, len(h.Epochs))
	for i, e := range h.Epochs {
		x[i] = float64(e + 1)
	}
	var losses, metrics []display.Series
	for _, k := range h.keys {
		s := display.Series{Name: k, X: x, Y: h.Values[k]}
		switch {
		case k == "lr":
		case strings.HasSuffix(k, "loss"):
			losses = append(losses, s)
		default:
			metrics = append(metrics, s)
		}
	}
	plots := display.Plots{display.LinePlot("Loss", "epoch", "loss", losses...)}
	if len(metrics) > 0 {
		plots = append(plots, display.LinePlot("Metrics", "epoch", "value", metrics...))
	}
	if lr := h.Values["lr"]; len(lr) > 0 && slices.Min(lr) != slices.Max(lr) {
		plots = append(plots, display.LinePlot("Learning rate", "epoch", "lr", display.Series{Name: "lr", X: x, Y: lr}))
	}
	return plots
}

// MIMEBundle renders the history as its plots side by side, with the text table as
// the fallback.
func (h *History) MIMEBundle() map[string]any {
	b := map[string]any{"text/plain": h.String()}
	if len(h.Epochs) == 0 {
		return b
	}
	plots := h.Plots().MIMEBundle()
	if _, ok := plots["image/png"]; !ok { // the plots failed: say why under the table
		b["text/plain"] = h.String() + "\n" + plots["text/plain"].(string)
		return b
	}
	for k, v := range plots {
		if k != "text/plain" {
			b[k] = v
		}
	}
	return b
}
